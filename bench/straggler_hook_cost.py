"""What a straggler sample costs the trainer itself, without nsa-dbg around it (bench/straggler.ts
measures the whole thing through `nsa-dbg run`; this is the trainer's side alone, for a box with
python and torch but no node, e.g. a GPU box): a compute-bound loop (fixed matmuls per iteration,
run `depth` Python frames down, as a trainer's step is) in a child process with nsa-dbg's stack hook
(src/stacks/sitecustomize.py), signalled at the fast sampling rate in windows that take turns:
samples by the sample signal (SIGURG, what nsa-dbg uses where the hook's watcher runs), none, samples
by the stack signal (SIGUSR2's faulthandler dump, the older way and the fallback), none. The mean
iteration in each window against the off windows beside it, from the same run.

  python3 bench/straggler_hook_cost.py [seconds=40] [rate_hz=16] [window_s=3] [depth=30]

Prints one JSON line: means per window kind, iterations, signals sent, and each way's cost in
percent of the iteration (costPct: the sample signal's; stackSignalCostPct: the stack signal's).
"""

import json
import random
import re
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HOOK = os.path.join(HERE, "..", "src", "stacks")
CHILD = r"""
import sys, time, torch
torch.set_num_threads(1)
sys.setrecursionlimit(10000)
a = torch.ones(32, 32)
# a fixed amount of arithmetic per iteration, about 50 ms on this box: many iterations a window,
# so the box's own jitter averages out (a sample lands in most of them at 16 a second)
t = time.time()
for _ in range(2000):
    a = a @ a / 32.0
n = max(20, int(2000 * 0.05 / max(time.time() - t, 1e-6)))
print("ready", flush=True)
end = time.time() + float(sys.argv[1])
out = []


def step(a):
    for _ in range(n):
        a = a @ a / 32.0
    return a


def down(k, a):
    # a trainer's step runs some tens of frames down (script, loop, step, model, layers)
    if k > 1:
        return down(k - 1, a)
    while time.time() < end:
        t = time.time()
        a = step(a)
        out.append(f"{t:.6f} {time.time() - t:.6f}")


down(int(sys.argv[3]), a)
with open(sys.argv[2], "w") as f:
    f.write("\n".join(out) + "\n")
"""


def caught(pid, sig):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("SigCgt:"):
                return (int(line.split()[1], 16) >> (sig - 1)) & 1 == 1
    return False


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 40
    rate = float(sys.argv[2]) if len(sys.argv) > 2 else 16
    window = float(sys.argv[3]) if len(sys.argv) > 3 else 3
    depth = int(sys.argv[4]) if len(sys.argv) > 4 else 30
    out = tempfile.mkdtemp(prefix="nsa-dbg-hook-cost-")
    env = dict(os.environ, PYTHONPATH=HOOK, NSA_DBG_STACK_DIR=out, NSA_DBG_STACK_SIGNAL="12", RANK="0")
    p = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(seconds), os.path.join(out, "iters.txt"), str(depth)],
        env=env, stdout=subprocess.PIPE, text=True,
    )
    assert p.stdout.readline().strip() == "ready"
    log = next(os.path.join(out, n) for n in os.listdir(out) if n.startswith("nsa-dbg-stacks_"))
    with open(log) as f:
        armed = [int(m) for m in re.findall(r"^# samples (\d+)$", f.read(), re.M)]
    if not armed:
        raise SystemExit("the hook armed no sample signal (its watcher did not start)")
    # window kinds in turn: the sample signal, none, the stack signal, none
    kinds = [("sample", armed[-1]), ("off", None), ("stack", int(signal.SIGUSR2)), ("off", None)]
    for _, sig in kinds:
        if sig is not None and not caught(p.pid, sig):
            raise SystemExit(f"the hook is not armed for signal {sig}")
    t0 = time.time()
    sent = {"sample": 0, "stack": 0}
    while p.poll() is None:
        now = time.time()
        kind, sig = kinds[int((now - t0) / window) % 4]
        if sig is not None and caught(p.pid, sig):
            with open(log, "a") as f:
                f.write(f"# request {now:.3f} {now:.6f} sample\n")
            os.kill(p.pid, sig)
            sent[kind] += 1
        time.sleep((1 / rate) * (0.5 + random.random()))
    with open(os.path.join(out, "iters.txt")) as f:
        its = [tuple(map(float, l.split())) for l in f if l.strip()]

    # iterations wholly inside one window (not at a turn), by window
    windows = {}
    for t, d in its:
        w = int((t - t0) / window)
        if t > t0 and w == int((t + d - t0) / window):
            windows.setdefault(w, []).append(d)
    # the mean: a sample hits one iteration in a few, and a median would hide what it costs
    mean = lambda xs: sum(xs) / len(xs) if xs else None
    by = {"sample": [], "stack": [], "off": []}
    for w, ds in windows.items():
        by[kinds[w % 4][0]].extend(ds)
    m = {k: mean(v) for k, v in by.items()}

    def cost(kind):
        # each window of `kind` against the mean of the off windows on either side of it: the box's
        # drift over the run (clock speed, other load) cancels; the median of those ratios
        ratios = []
        for w, ds in windows.items():
            if kinds[w % 4][0] == kind and w - 1 in windows and w + 1 in windows:
                ratios.append(mean(ds) / ((mean(windows[w - 1]) + mean(windows[w + 1])) / 2))
        if not ratios:
            return None
        ratios.sort()
        mid = len(ratios) // 2
        r = ratios[mid] if len(ratios) % 2 else (ratios[mid - 1] + ratios[mid]) / 2
        return round((r - 1) * 100, 2)
    print(json.dumps({
        "meanSampleS": m["sample"], "meanStackS": m["stack"], "meanOffS": m["off"],
        "iters": {k: len(v) for k, v in by.items()}, "signals": sent, "rateHz": rate, "depth": depth,
        "costPct": cost("sample"), "stackSignalCostPct": cost("stack"),
    }))


if __name__ == "__main__":
    main()
