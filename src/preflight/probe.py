"""nsa-dbg's preflight probe: run on the box with the lane's Python and env (stdlib; torch if the lane has it).

It collects raw sources and two short measurements and prints one JSON line; nsa-dbg parses and
judges them (src/preflight/). Raw text is passed through unparsed on purpose: the parsers are unit
tested against captured real output, and a box's odd output is kept for the report.

It never changes a device setting: nvidia-smi is only queried, and the measurements are ordinary
CUDA work (a matmul and an all_reduce) that ends before the probe does.

  probe.py --smi JSON_ARGV --dirs JSON_LIST --ranks N [--simulate FAULTS]

--simulate on (the demo): torch, the measurements and the kernel log are simulated; env
NSA_DEMO_GPU_FAULTS (comma list, as the demo's nvidia-smi stand-in reads it) picks which of them
look broken: no-torch, slow-matmul, slow-allreduce, xid ("all": every fault but no-torch).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

MATMUL_N = 8192
ALLREDUCE_BYTES = 256 * 1024 * 1024
# flags of the lane's env that change how collectives run (named in the report)
COLLECTIVE_ENV_PREFIXES = ("NCCL_", "TORCH_NCCL_", "GLOO_", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")


def _run(argv, timeout=20):
    """{out, err, code} of a command; a missing program or a timeout is said, not raised."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return {"out": p.stdout, "err": p.stderr[-2000:], "code": p.returncode}
    except FileNotFoundError:
        return {"out": "", "err": f"{argv[0]}: not found", "code": 127}
    except subprocess.TimeoutExpired:
        return {"out": "", "err": f"{argv[0]}: timed out after {timeout}s", "code": 124}


def _read(path):
    try:
        with open(path, "r", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _existing(path):
    """the nearest folder that exists at or above path (an out_dir is made by the trainer later)"""
    p = os.path.abspath(os.path.expanduser(path))
    while not os.path.isdir(p) and p != "/":
        p = os.path.dirname(p)
    return p


def _nvrm(text):
    """the driver's lines only: the rest of a kernel log is nobody's business here"""
    return "".join(l + "\n" for l in text.splitlines() if "NVRM" in l or "Xid" in l)[-200000:]


def _dmesg():
    r = _run(["dmesg"], timeout=10)
    if r["code"] == 0:
        return {"source": "dmesg", "text": _nvrm(r["out"])}
    for path in ("/var/log/kern.log", "/var/log/messages"):
        text = _read(path)
        if text is not None:
            return {"source": path, "text": _nvrm(text)}
    return {"source": "dmesg", "text": None, "error": (r["err"] or "").strip()[:300]}


def _host_facts(smi, dirs):
    facts = {
        "host": socket.gethostname(),
        "python": sys.executable,
        "pythonVersion": sys.version.split()[0],
        "smiQuery": _run(smi + ["-q"]),
        "smiApps": _run(smi + ["--query-compute-apps=gpu_uuid,pid,process_name,used_memory",
                               "--format=csv,noheader,nounits"]),
        "smiNvlink": _run(smi + ["nvlink", "-s"]),
        "meminfo": _read("/proc/meminfo"),
        "df": [],
        "ptraceScope": _read("/proc/sys/kernel/yama/ptrace_scope"),
        "procStatus": _read("/proc/self/status"),
        "pyspy": shutil.which("py-spy"),
        "kernelLog": _dmesg(),
        "env": {k: v for k, v in os.environ.items() if k.startswith(COLLECTIVE_ENV_PREFIXES)},
    }
    for d in dirs:
        at = _existing(d)
        facts["df"].append({"path": d, "at": at, **_run(["df", "-Pk", at])})
    return facts


def _torch_facts():
    try:
        import torch  # noqa: F401
    except Exception as e:  # ImportError, or a broken install that fails while importing
        return None, {"error": f"{type(e).__name__}: {e}"[:400]}
    import torch

    t = {"version": torch.__version__, "cuda": torch.version.cuda}
    try:
        t["available"] = bool(torch.cuda.is_available())
        t["deviceCount"] = torch.cuda.device_count() if t["available"] else 0
        t["devices"] = [torch.cuda.get_device_name(i) for i in range(t["deviceCount"])]
    except Exception as e:
        t["available"] = False
        t["deviceCount"] = 0
        t["error"] = f"{type(e).__name__}: {e}"[:400]
    try:
        # asked also when CUDA is hidden: the library torch would use is still worth naming
        v = torch.cuda.nccl.version()
        t["nccl"] = ".".join(str(x) for x in v) if isinstance(v, tuple) else (str(v) if v else None)
    except Exception:
        t["nccl"] = None
    return torch, t


def _matmul_tflops(torch, device, seconds=1.0):
    a = torch.randn(MATMUL_N, MATMUL_N, device=device, dtype=torch.bfloat16)
    b = torch.randn(MATMUL_N, MATMUL_N, device=device, dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize(device)
    iters, t0 = 0, time.perf_counter()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    # enough iterations for ~seconds of work at the rate of the first few (clocks ramp up meanwhile)
    while time.perf_counter() - t0 < seconds:
        for _ in range(10):
            a @ b
        iters += 10
        torch.cuda.synchronize(device)
    end.record()
    torch.cuda.synchronize(device)
    ms = start.elapsed_time(end)
    return 2 * MATMUL_N**3 * iters / (ms / 1000) / 1e12


def _rank_main(rank, world, store_path, out_dir, use_cuda):
    """one rank of the measurement: its GPU's matmul rate, then all_reduce bus bandwidth"""
    import datetime

    import torch
    import torch.distributed as dist

    res = {"rank": rank}
    try:
        if use_cuda:
            torch.cuda.set_device(rank)
            res["gpu"] = rank
            res["tflops"] = _matmul_tflops(torch, torch.device("cuda", rank))
        if world > 1:
            backend = "nccl" if use_cuda else "gloo"
            dist.init_process_group(backend, init_method=f"file://{store_path}", rank=rank,
                                    world_size=world, timeout=datetime.timedelta(seconds=40))
            dev = torch.device("cuda", rank) if use_cuda else torch.device("cpu")
            # gloo on CPU moves a quarter as much: the same check stays within its time
            x = (torch.ones(ALLREDUCE_BYTES // 2, dtype=torch.bfloat16, device=dev) if use_cuda
                 else torch.ones(ALLREDUCE_BYTES // 16, dtype=torch.float32))
            for _ in range(3):
                dist.all_reduce(x)
            if use_cuda:
                torch.cuda.synchronize(dev)
            n = 10 if use_cuda else 3
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(n):
                dist.all_reduce(x)
            if use_cuda:
                torch.cuda.synchronize(dev)
            dt = (time.perf_counter() - t0) / n
            nbytes = x.numel() * x.element_size()
            # nccl-tests' bus bandwidth: what each link carries in a ring all_reduce
            res["allreduce"] = {"backend": backend, "bytes": nbytes, "seconds": dt,
                                "busGBs": nbytes * 2 * (world - 1) / world / dt / 1e9}
            dist.destroy_process_group()
    except Exception as e:
        res["error"] = f"{type(e).__name__}: {e}"[:400]
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(res, f)


def _pcie_under_load(smi, stop, out):
    """PCIe links train down at idle: read gen/width while the matmuls run"""
    time.sleep(0.5)
    if not stop.is_set():
        out.append(_run(smi + ["--query-gpu=index,pcie.link.gen.current,pcie.link.gen.max,"
                                "pcie.link.width.current,pcie.link.width.max",
                                "--format=csv,noheader,nounits"], timeout=10))


def _measure(torch, t, smi, ranks):
    use_cuda = t.get("available", False)
    world = min(ranks, t.get("deviceCount", 0)) if use_cuda else ranks
    if world < 1:
        return {"world": 0, "ranks": []}
    tmp = tempfile.mkdtemp(prefix="nsa-dbg-preflight-")
    store = os.path.join(tmp, "store")
    stop, load = threading.Event(), []
    watcher = threading.Thread(target=_pcie_under_load, args=(smi, stop, load), daemon=True)
    if use_cuda:
        watcher.start()
    if world == 1:
        _rank_main(0, 1, store, tmp, use_cuda)
    else:
        import torch.multiprocessing as mp

        ctx = mp.spawn(_rank_main, args=(world, store, tmp, use_cuda), nprocs=world, join=False)
        deadline = time.time() + 50
        while not ctx.join(timeout=1):
            if time.time() > deadline:
                for p in ctx.processes:
                    p.kill()
                break
    stop.set()
    if use_cuda:
        watcher.join(timeout=10)
    out = []
    for r in range(world):
        text = _read(os.path.join(tmp, f"rank{r}.json"))
        out.append(json.loads(text) if text else {"rank": r, "error": "no result (timed out or crashed)"})
    shutil.rmtree(tmp, ignore_errors=True)
    return {"world": world, "ranks": out, "pcieLoad": load[0] if load else None}


def _simulated(faults, ranks):
    """the demo's torch and measurements (no torch needed); the GPU's own faults come from the shim"""
    if "no-torch" in faults:
        return {"error": "ModuleNotFoundError: No module named 'torch'"}, None
    t = {"version": "2.11.0+cu130", "cuda": "13.0", "available": True, "deviceCount": 1,
         "devices": ["NVIDIA H200"], "nccl": "2.28.9", "simulated": True}
    rate = 312.0 if "slow-matmul" in faults else 792.0
    m = {"world": 1, "ranks": [{"rank": 0, "gpu": 0, "tflops": rate}], "simulated": True}
    if ranks > 1:
        # the demo's one GPU carries all ranks: a simulated NVLink ring, slow with the fault
        bus = 28.9 if "slow-allreduce" in faults else 301.0
        m["world"] = ranks
        ar = {"backend": "nccl", "bytes": ALLREDUCE_BYTES, "seconds": 0.0, "busGBs": bus}
        m["ranks"] = [{**m["ranks"][0], "allreduce": ar}] + [{"rank": r, "allreduce": ar} for r in range(1, ranks)]
    return t, m


def main(argv):
    args = {"--smi": '["nvidia-smi"]', "--dirs": "[]", "--ranks": "1", "--simulate": None}
    i = 0
    while i < len(argv):
        if argv[i] in args and i + 1 < len(argv):
            args[argv[i]] = argv[i + 1]
            i += 2
        else:
            sys.stderr.write(f"probe.py: unknown argument {argv[i]!r}\n")
            return 2
    smi, dirs, ranks = json.loads(args["--smi"]), json.loads(args["--dirs"]), int(args["--ranks"])
    t0 = time.time()
    # before torch touches the GPU: every compute process listed now belongs to someone else
    out = _host_facts(smi, dirs)
    if args["--simulate"] is not None:
        faults = [f.strip() for f in os.environ.get("NSA_DEMO_GPU_FAULTS", "").split(",") if f.strip()]
        if "all" in faults:
            faults += ["slow-matmul", "slow-allreduce", "xid"]
        out["torch"], out["measure"] = _simulated(faults, ranks)
        if "xid" in faults:
            out["kernelLog"] = {"source": "dmesg (simulated)",
                                "text": "[ 8812.118245] NVRM: Xid (PCI:0000:00:06): 79, pid=2211, "
                                        "name=python3, GPU has fallen off the bus.\n"}
    else:
        torch, out["torch"] = _torch_facts()
        out["measure"] = _measure(torch, out["torch"], smi, ranks) if torch is not None else None
    out["elapsedS"] = round(time.time() - t0, 2)
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
