"""A small real-CUDA trainer that speaks the nsa-vibe contract (stdout step lines, heartbeat_rank0.jsonl
with torch's memory counters, SIGUSR1/SIGTERM stack dumps in the trainer's format), used to check
nsa-dbg's GPU panel and signal handling against a real CUDA process on a GPU box.

Default: steps 1-5 run matmuls, step 6 spins in `_forward_prefill_sequential` (small CUDA ops in a
Python loop, so the signal handler still runs). NSA_PREFILL_BATCHED=1: every step completes.
Out dir: --out-dir, else $NSA_DBG_OUT_DIR, else ./artifacts/cuda_smoke.
"""
import argparse, datetime, json, math, os, signal, sys, threading, time, traceback

import torch

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=20)
p.add_argument("--out-dir", default=os.environ.get("NSA_DBG_OUT_DIR", "artifacts/cuda_smoke"))
p.add_argument("--size", type=int, default=8192)
args, _ = p.parse_known_args()
os.makedirs(args.out_dir, exist_ok=True)
dev = torch.device("cuda")
batched = os.environ.get("NSA_PREFILL_BATCHED", "").lower() in ("1", "true", "yes")


def iso():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None).isoformat() + "Z"


def beat(step, msg, **extra):
    rec = {"ts": time.time(), "iso": iso(), "pid": os.getpid(), "rank": 0, "step": step, "msg": msg,
           "gpu_mem_alloc": torch.cuda.memory_allocated() // 2**20,
           "gpu_mem_reserved": torch.cuda.memory_reserved() // 2**20}
    rec.update(extra)
    with open(os.path.join(args.out_dir, "heartbeat_rank0.jsonl"), "a") as f:
        f.write(json.dumps(rec) + "\n")


def dump_stack(signum, frame):
    path = os.path.join(args.out_dir, f"stackdump_{int(time.time())}.txt")
    with open(path, "w") as f:
        f.write(f"Signal {signum} at {iso()}\n\n")
        for t in threading.enumerate():
            stack = sys._current_frames().get(t.ident)
            if stack is None:
                continue
            f.write(f"--- Thread: {t.name} ({t.ident}) ---\n")
            f.write("".join(traceback.format_stack(stack)))
            f.write("\n")


signal.signal(signal.SIGUSR1, dump_stack)
signal.signal(signal.SIGTERM, dump_stack)

print(f"[boot] loading config cuda_smoke ({torch.cuda.get_device_name(0)})", flush=True)
a = torch.randn(args.size, args.size, device=dev, dtype=torch.bfloat16)
b = torch.randn(args.size, args.size, device=dev, dtype=torch.bfloat16)
keep = []
beat(0, "boot", phase="start")


def _forward_prefill_batched(x):
    for _ in range(20):
        x = (x @ b) / math.sqrt(args.size)
    torch.cuda.synchronize()
    return x


def _forward_prefill_sequential(x, step):
    if step == 6:
        while True:  # the seed reports' step-5 hang: busy, in Python, with CUDA work in flight
            x = (x[:256, :256] @ b[:256, :256]) * 0.0 + x[:256, :256]
            torch.cuda.synchronize()
    return _forward_prefill_batched(x)


t_last = time.time()
for step in range(1, args.steps + 1):
    beat(step, "beat", phase="step_start")
    if os.path.exists(os.path.join(args.out_dir, ".HALT")):
        print("[train] HALT file detected — stopping gracefully.", flush=True)
        break
    if step <= 5:
        print(f"[debug] step {step}: input shape torch.Size([1, {args.size}]), seq_len {args.size}", flush=True)
    out = _forward_prefill_batched(a) if batched else _forward_prefill_sequential(a, step)
    keep.append(torch.empty(256 * 2**20, dtype=torch.uint8, device=dev))  # reserved memory grows 256 MiB/step
    loss = 5.70 + 0.01 * math.sin(step) + float(out[0, 0].float().item()) * 0.0
    now = time.time()
    tps = args.size / max(now - t_last, 1e-6)
    t_last = now
    print(f"step {step:04d} | loss {loss:.4f} | lr {1e-4:.2e} | toks/s {tps:.0f}", flush=True)
    beat(step, "progress", loss=loss, toks_per_s=tps)
    beat(step, "step_end", phase="end")

print(json.dumps({"device": "cuda", "steps": args.steps}, indent=2), flush=True)
