"""What a straggler sample costs the trainer itself, without nsa-dbg around it (bench/straggler.ts
measures the whole thing through `nsa-dbg run`; this is the trainer's side alone, for a box with
python and torch but no node, e.g. a GPU box): a compute-bound loop (fixed matmuls per iteration)
in a child process with nsa-dbg's stack hook (src/stacks/sitecustomize.py), signalled at the fast
sampling rate in alternate windows, as `alternate:S` does; the mean iteration with and without.

  python3 bench/straggler_hook_cost.py [seconds=40] [rate_hz=16] [window_s=3]

Prints one JSON line: means on/off, iterations, signals sent, cost in percent.
"""

import json
import random
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
a = torch.ones(32, 32)
# a fixed amount of arithmetic per iteration, about a quarter second on this box
t = time.time()
for _ in range(2000):
    a = a @ a / 32.0
n = max(100, int(2000 * 0.25 / max(time.time() - t, 1e-6)))
print("ready", flush=True)
end = time.time() + float(sys.argv[1])
out = []
while time.time() < end:
    t = time.time()
    for _ in range(n):
        a = a @ a / 32.0
    out.append(f"{t:.6f} {time.time() - t:.6f}")
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
    out = tempfile.mkdtemp(prefix="nsa-dbg-hook-cost-")
    env = dict(os.environ, PYTHONPATH=HOOK, NSA_DBG_STACK_DIR=out, NSA_DBG_STACK_SIGNAL="12", RANK="0")
    p = subprocess.Popen([sys.executable, "-c", CHILD, str(seconds), os.path.join(out, "iters.txt")], env=env, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    sig = signal.SIGUSR2
    if not caught(p.pid, sig):
        raise SystemExit("the hook is not armed")
    log = next(os.path.join(out, n) for n in os.listdir(out) if n.startswith("nsa-dbg-stacks_"))
    t0 = time.time()
    sent = 0
    while p.poll() is None:
        now = time.time()
        on = int((now - t0) / window) % 2 == 0
        if on and caught(p.pid, sig):
            with open(log, "a") as f:
                f.write(f"# request {now:.3f} {now:.6f} sample\n")
            os.kill(p.pid, sig)
            sent += 1
        time.sleep((1 / rate) * (0.5 + random.random()))
    with open(os.path.join(out, "iters.txt")) as f:
        its = [tuple(map(float, l.split())) for l in f if l.strip()]

    def phase(t):
        return int((t - t0) / window) % 2 == 0

    # iterations wholly inside one window (not at a turn)
    on = [d for t, d in its if t > t0 and phase(t) and phase(t + d) and int((t - t0) / window) == int((t + d - t0) / window)]
    off = [d for t, d in its if t > t0 and not phase(t) and int((t - t0) / window) == int((t + d - t0) / window)]
    # the mean: a sample hits one iteration in a few, and a median would hide what it costs
    mean = lambda xs: sum(xs) / len(xs) if xs else None
    m_on, m_off = mean(on), mean(off)
    print(json.dumps({
        "meanOnS": m_on, "meanOffS": m_off, "itersOn": len(on), "itersOff": len(off),
        "signals": sent, "rateHz": rate,
        "costPct": None if not m_on or not m_off else round((m_on / m_off - 1) * 100, 2),
    }))


if __name__ == "__main__":
    main()
