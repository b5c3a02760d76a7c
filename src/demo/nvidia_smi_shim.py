#!/usr/bin/env python3
"""Simulated ``nvidia-smi`` for nsa-dbg's demo mode (stdlib only).

The numbers follow the demo trainer: it reads the run's ``heartbeat_rank0.jsonl``
(from ``--demo-run-dir DIR`` or env ``NSA_DEMO_RUN_DIR``; default ``artifacts/demo``)
and reports one H200 whose memory is the trainer's last ``gpu_mem_reserved`` plus a
CUDA context while the heartbeat's pid is alive.

Supported:
  nvidia-smi                                      short table
  nvidia-smi -L                                   GPU list
  nvidia-smi -q [-d ...]                          short NVSMI LOG (memory + utilization)
  nvidia-smi --query-gpu=F1,F2,... --format=csv[,noheader][,nounits] [-lms MS | -l S]
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=... [-lms MS | -l S]

Numbers while a trainer pid is alive (per GPU / per process):
  used_memory (compute app)  = gpu_mem_reserved + 500 MiB   (CUDA context)
  memory.used (GPU)          = used_memory + 9 MiB          (driver)
  utilization.gpu            = 90..99 (0 while the process is stopped, e.g. SIGSTOP)
otherwise memory.used 0, utilization 0, no compute apps.

Faults for `nsa-dbg check --demo` (env NSA_DEMO_GPU_FAULTS, comma-separated; "all": every one),
each drawn where the real nvidia-smi shows it (-q sections, the CSV queries, `nvlink -s`):
  throttle         HW Slowdown and HW Thermal Slowdown active
  ecc              2 uncorrected DRAM errors (volatile and aggregate)
  remap            a remapped row pending, 1 uncorrectable
  persistence-off  persistence mode disabled
  mig              MIG mode enabled
  foreign-proc     another process (pid 4242) holding 120,000 MiB
  pcie-x4          the PCIe link trained at Gen 3 x4 of Gen 5 x16
  nvlink-down      8 of 18 NVLinks inactive
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import zlib

import nvidia_smi_qlog  # beside this file (the script's folder is on sys.path)

GPU_NAME = "NVIDIA H200"
GPU_NAME_LONG = "NVIDIA H200 (simulated)"
MEM_TOTAL = 143771
CTX_MIB = 500  # CUDA context + cuBLAS workspace of one torch process
DRIVER_MIB = 9  # used on the device beyond the process' own allocations
DRIVER_VERSION = "580.159.04"
CUDA_VERSION = "13.0"
BUS_ID = "00000000:00:06.0"
UUID = "GPU-5e1d0c2a-7f3b-4c19-9d8e-2b6a0c4f1e73"
POWER_LIMIT = 700.0
DEFAULT_RUN_DIR = "artifacts/demo"
FAULT_NAMES = ("throttle", "ecc", "remap", "persistence-off", "mig", "foreign-proc", "pcie-x4", "nvlink-down")
FOREIGN = {"pid": 4242, "name": "python3", "used": 120000}


def _faults():
    raw = [f.strip() for f in os.environ.get("NSA_DEMO_GPU_FAULTS", "").split(",") if f.strip()]
    return set(FAULT_NAMES) if "all" in raw else set(raw)


class _Stop(Exception):
    pass


def _die(msg: str, code: int = 2):
    sys.stdout.write(msg.rstrip("\n") + "\n")
    sys.stdout.flush()
    sys.exit(code)


# -- trainer state -------------------------------------------------------------

def _last_heartbeat(run_dir: str):
    path = os.path.join(run_dir, "heartbeat_rank0.jsonl")
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 65536))
            data = f.read()
    except OSError:
        return None
    for raw in reversed(data.split(b"\n")):
        raw = raw.strip()
        if not raw:
            continue
        try:
            rec = json.loads(raw)
        except ValueError:
            continue  # partial line while the trainer is writing
        if isinstance(rec, dict) and "pid" in rec:
            return rec
    return None


def _proc_state(pid: int):
    """'R', 'S', 'T', ... or None when the process is gone (zombies count as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "r") as f:
            stat = f.read()
        state = stat[stat.rindex(")") + 2:].split()[0]
        return None if state in ("Z", "X") else state
    except (OSError, ValueError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return "S"
    except OSError:
        return None
    return "S" if sys.platform != "linux" else None


def _proc_name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", "r") as f:
            name = f.read().strip()
        if name:
            return name
    except OSError:
        pass
    return "python3"


def _sample(run_dir: str, now: float) -> dict:
    hb = _last_heartbeat(run_dir)
    procs = []
    util = 0
    if hb is not None:
        try:
            pid = int(hb.get("pid"))
        except (TypeError, ValueError):
            pid = -1
        state = _proc_state(pid) if pid > 0 else None
        if state is not None:
            reserved = int(hb.get("gpu_mem_reserved") or 0)
            procs.append({"pid": pid, "name": _proc_name(pid), "used": reserved + CTX_MIB})
            if state != "T" and state != "t":
                util = 90 + (zlib.crc32(f"{pid}:{int(now * 2)}".encode()) % 10)
    if "foreign-proc" in _faults():
        procs.append(dict(FOREIGN))
    used = sum(p["used"] for p in procs) + (DRIVER_MIB if procs else 0)
    if procs:
        temp = 42 + util // 25
        power = 385.0 + util * 0.4 + (zlib.crc32(str(int(now * 10)).encode()) % 300) / 100.0
    else:
        temp = 39
        power = 79.30 + (zlib.crc32(str(int(now * 10)).encode()) % 15) / 100.0
    return {"procs": procs, "used": used, "util": util, "temp": temp, "power": power,
            "mem_util": min(99, util // 3) if procs else 0}


# -- fields ----------------------------------------------------------------------

def _timestamp(now: float) -> str:
    lt = time.localtime(now)
    return time.strftime("%Y/%m/%d %H:%M:%S", lt) + ".%03d" % int((now % 1) * 1000)


# name -> (header, unit, getter(sample, now))
GPU_FIELDS = {
    "timestamp": ("timestamp", "", lambda s, now: _timestamp(now)),
    "driver_version": ("driver_version", "", lambda s, now: DRIVER_VERSION),
    "count": ("count", "", lambda s, now: "1"),
    "index": ("index", "", lambda s, now: "0"),
    "name": ("name", "", lambda s, now: GPU_NAME),
    "gpu_name": ("name", "", lambda s, now: GPU_NAME),
    "uuid": ("uuid", "", lambda s, now: UUID),
    "gpu_uuid": ("uuid", "", lambda s, now: UUID),
    "pci.bus_id": ("pci.bus_id", "", lambda s, now: BUS_ID),
    "gpu_bus_id": ("pci.bus_id", "", lambda s, now: BUS_ID),
    "pstate": ("pstate", "", lambda s, now: "P0"),
    "memory.total": ("memory.total", "MiB", lambda s, now: str(MEM_TOTAL)),
    "memory.used": ("memory.used", "MiB", lambda s, now: str(s["used"])),
    "memory.free": ("memory.free", "MiB", lambda s, now: str(MEM_TOTAL - s["used"] - 616)),
    "memory.reserved": ("memory.reserved", "MiB", lambda s, now: "616"),
    "utilization.gpu": ("utilization.gpu", "%", lambda s, now: str(s["util"])),
    "utilization.memory": ("utilization.memory", "%", lambda s, now: str(s["mem_util"])),
    "temperature.gpu": ("temperature.gpu", "", lambda s, now: str(s["temp"])),
    "power.draw": ("power.draw", "W", lambda s, now: "%.2f" % s["power"]),
    "power.limit": ("power.limit", "W", lambda s, now: "%.2f" % POWER_LIMIT),
    "fan.speed": ("fan.speed", "%", lambda s, now: "[N/A]"),
    "clocks.sm": ("clocks.current.sm", "MHz", lambda s, now: "1980" if s["util"] else "345"),
    "clocks.current.sm": ("clocks.current.sm", "MHz", lambda s, now: "1980" if s["util"] else "345"),
    "persistence_mode": ("persistence_mode", "", lambda s, now: "Disabled" if "persistence-off" in _faults() else "Enabled"),
    "pcie.link.gen.current": ("pcie.link.gen.current", "", lambda s, now: "3" if "pcie-x4" in _faults() else "5"),
    "pcie.link.gen.max": ("pcie.link.gen.max", "", lambda s, now: "5"),
    "pcie.link.width.current": ("pcie.link.width.current", "", lambda s, now: "4" if "pcie-x4" in _faults() else "16"),
    "pcie.link.width.max": ("pcie.link.width.max", "", lambda s, now: "16"),
    "clocks.mem": ("clocks.current.memory", "MHz", lambda s, now: "3201"),
    "clocks.current.memory": ("clocks.current.memory", "MHz", lambda s, now: "3201"),
}

APP_FIELDS = {
    "timestamp": ("timestamp", "", lambda p, now: _timestamp(now)),
    "pid": ("pid", "", lambda p, now: str(p["pid"])),
    "process_name": ("process_name", "", lambda p, now: p["name"]),
    "name": ("process_name", "", lambda p, now: p["name"]),
    "used_memory": ("used_gpu_memory", "MiB", lambda p, now: str(p["used"])),
    "used_gpu_memory": ("used_gpu_memory", "MiB", lambda p, now: str(p["used"])),
    "gpu_name": ("gpu_name", "", lambda p, now: GPU_NAME),
    "gpu_uuid": ("gpu_uuid", "", lambda p, now: UUID),
    "gpu_bus_id": ("gpu_bus_id", "", lambda p, now: BUS_ID),
}


def _cell(value: str, unit: str, units: bool) -> str:
    if not units or not unit or value.startswith("["):
        return value
    return f"{value} {unit}"


def _header(fields, table, units: bool) -> str:
    out = []
    for fld in fields:
        head, unit, _ = table[fld]
        out.append(f"{head} [{unit}]" if units and unit else head)
    return ", ".join(out)


# -- commands --------------------------------------------------------------------

def _query(fields, table, fmt, run_dir, interval_s, apps: bool):
    if fmt is None:
        _die('"--format" must be specified when querying.')
    opts = [o.strip() for o in fmt.split(",")]
    if "csv" not in opts:
        _die(f'"{fmt}" is not a valid format.')
    header = "noheader" not in opts
    units = "nounits" not in opts
    for fld in fields:
        if fld not in table:
            _die(f'Field "{fld}" is not a valid field to query.')

    def emit_once():
        now = time.time()
        s = _sample(run_dir, now)
        lines = []
        if apps:
            for p in s["procs"]:
                lines.append(", ".join(_cell(table[f][2](p, now), table[f][1], units) for f in fields))
        else:
            lines.append(", ".join(_cell(table[f][2](s, now), table[f][1], units) for f in fields))
        if lines:
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()

    if header:
        sys.stdout.write(_header(fields, table, units) + "\n")
        sys.stdout.flush()
    emit_once()
    if interval_s is None:
        return
    next_t = time.monotonic() + interval_s
    while True:
        delay = next_t - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        next_t += interval_s
        if next_t < time.monotonic():
            next_t = time.monotonic() + interval_s
        emit_once()


def _plain(run_dir):
    now = time.time()
    s = _sample(run_dir, now)
    bar = "+-----------------------------------------------------------------------------------------+"
    sep = "+-----------------------------------------+------------------------+----------------------+"
    out = [
        time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(now)) + "       ",
        bar,
        "| NVIDIA-SMI %-22s Driver Version: %-14s CUDA Version: %-9s|"
        % (DRIVER_VERSION + " (sim)", DRIVER_VERSION, CUDA_VERSION),
        sep,
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                        |               MIG M. |",
        "|=========================================+========================+======================|",
        "|" + ("   0  %-31sOn  " % GPU_NAME_LONG[:31]) + "|" + ("   %s Off " % BUS_ID) + "|"
        + "0".rjust(21) + " |",
        "|" + (" N/A   %2dC    P0" % s["temp"]) + ("%dW / %4dW" % (round(s["power"]), POWER_LIMIT)).rjust(24)
        + " |" + ("%dMiB / %dMiB" % (s["used"], MEM_TOTAL)).rjust(23) + " |"
        + ("%d%%" % s["util"]).rjust(8) + "      Default |",
        "|                                         |                        |             Disabled |",
        sep,
        "",
        bar,
        "| Processes:                                                                              |",
        "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |",
        "|        ID   ID                                                               Usage      |",
        "|=========================================================================================|",
    ]
    if not s["procs"]:
        out.append("|  No running processes found                                                             |")
    for p in s["procs"]:
        row = "|  %3d   N/A  N/A  %15d      C   %-34s" % (0, p["pid"], p["name"][:34])
        out.append(row + ("%dMiB" % p["used"]).rjust(len(bar) - len(row) - 2) + " |")
    out.append(bar)
    sys.stdout.write("\n".join(out) + "\n")


def _query_log(run_dir):
    now = time.time()
    sys.stdout.write(nvidia_smi_qlog.query_log(sys.modules[__name__], _sample(run_dir, now), _faults(), now))


def _usage():
    sys.stdout.write(
        "NVIDIA System Management Interface -- simulated for nsa-dbg demo mode\n\n"
        "    nvidia-smi [--demo-run-dir DIR] [-L | -q | --query-gpu=... | --query-compute-apps=...]\n"
        "               [--format=csv[,noheader][,nounits]] [-l SEC | -lms MS]\n")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    run_dir = os.environ.get("NSA_DEMO_RUN_DIR") or DEFAULT_RUN_DIR
    mode = "plain"
    fields = []
    fmt = None
    interval_s = None
    i = 0

    def value(opt):
        nonlocal i
        if "=" in argv[i] and argv[i].startswith("--"):
            return argv[i].split("=", 1)[1]
        i += 1
        if i >= len(argv):
            _die(f'Option "{opt}" requires a value.')
        return argv[i]

    while i < len(argv):
        a = argv[i]
        if a == "--demo-run-dir" or a.startswith("--demo-run-dir="):
            run_dir = value(a)
        elif a == "nvlink":
            mode = "nvlink"
        elif a in ("-s", "--status") and mode == "nvlink":
            pass
        elif a == "-L" or a == "--list-gpus":
            mode = "list"
        elif a in ("-q", "--query"):
            mode = "qlog"
        elif a in ("-d", "--display") or a.startswith("--display="):
            value(a)
        elif a in ("-i", "--id") or a.startswith("--id="):
            idx = value(a)
            if idx not in ("0", BUS_ID, UUID):
                _die("No devices were found")
        elif a.startswith("--query-gpu") or a.startswith("--query-compute-apps"):
            mode = "apps" if a.startswith("--query-compute-apps") else "gpu"
            fields = [f.strip() for f in value(a).split(",") if f.strip()]
        elif a in ("--format",) or a.startswith("--format="):
            fmt = value(a)
        elif a in ("-l", "--loop") or a.startswith("--loop="):
            v = value(a)
            try:
                interval_s = max(1.0, float(v))
            except ValueError:
                _die(f'Invalid value "{v}" for "-l".')
        elif a in ("-lms", "--loop-ms") or a.startswith("--loop-ms="):
            v = value(a)
            try:
                interval_s = max(0.001, float(v) / 1000.0)
            except ValueError:
                _die(f'Invalid value "{v}" for "-lms".')
        elif a in ("-h", "--help"):
            _usage()
            return 0
        else:
            _die(f'Invalid combination of input arguments. Please run \'nvidia-smi -h\' for help.\n'
                 f'(unknown option "{a}")')
        i += 1

    if mode == "list":
        sys.stdout.write(f"GPU 0: {GPU_NAME_LONG} (UUID: {UUID})\n")
    elif mode == "nvlink":
        sys.stdout.write(nvidia_smi_qlog.nvlink_status(sys.modules[__name__], _faults()))
    elif mode == "qlog":
        _query_log(run_dir)
    elif mode == "plain":
        _plain(run_dir)
    elif mode == "gpu":
        _query(fields, GPU_FIELDS, fmt, run_dir, interval_s, apps=False)
    else:
        _query(fields, APP_FIELDS, fmt, run_dir, interval_s, apps=True)
    sys.stdout.flush()
    return 0


def _on_signal(signum, frame):
    raise _Stop()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, _on_signal)
    rc = 0
    try:
        rc = main()
    except (_Stop, KeyboardInterrupt):
        rc = 0
    except BrokenPipeError:
        rc = 0
    # a closed pipe must not turn into an error at interpreter shutdown
    try:
        sys.stdout.flush()
    except (BrokenPipeError, OSError):
        pass
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
    sys.exit(rc)
