"""The demo's many-rank mode (``--ranks N``): a stdlib stand-in for N DDP ranks.

The parent forks N rank processes (itself writes no heartbeat, like torchrun) and copies their
output to its stdout with a ``[rankR]:`` prefix. Each rank writes ``heartbeat_rank{R}.jsonl`` with
its pid, answers SIGUSR1 with a stack dump, and at the end of every step meets the others at a
simulated collective ("all_reduce": a file barrier in the run dir). While it waits there its main
thread sits in one blocking C call with SIGUSR1 blocked, as a rank inside a native collective: its
Python handler cannot run, a C-level faulthandler dump (nsa-dbg's stack hook) still can.

NSA_DEMO_RANK_MODE (the lanes demo-rank-stall / demo-rank-crash):
  stall   the last rank stalls in its backward at step NSA_DEMO_RANK_STEP (default 3) while the
          others wait for it in the all_reduce
  crash   the last rank raises first at that step; the others then fail in the all_reduce
          ("Connection closed by peer")
  straggler  the last rank does NSA_DEMO_RANK_SLOWER (default 1.1) times the others' work in
          every step: all ranks keep the same step time (they meet in the all_reduce), and only
          where the ranks are when sampled tells which one the others wait for
"""

# faulthandler, functools and socket are the stack hook's: imported once here, before the forks,
# not in each child, where an import copies pages (256 ranks started in 13 s instead of 4 here)
import atexit
import faulthandler  # noqa: F401
import functools  # noqa: F401
import gc
import json
import os
import signal
import socket  # noqa: F401
import sys
import threading
import time
import traceback

MODE = os.environ.get("NSA_DEMO_RANK_MODE", "")
AT_STEP = int(os.environ.get("NSA_DEMO_RANK_STEP", "3"))
SLOWER = float(os.environ.get("NSA_DEMO_RANK_SLOWER", "1.1"))


def parent(ranks, out_dir, nodes, steps, step_ms):
    """Forks the N ranks (each a process of its own, with nsa-dbg's stack hook registered as at a
    rank's start), then copies their output. A fork costs ~12 ms here where a new interpreter costs
    80-500 ms of CPU (the site packages a box imports at every start), so the start no longer
    depends on the box's Python: the ranks are light, as issue 34's simulation asks.
    Every rank is forked before any thread starts here (a fork copies only the calling thread)."""
    children = []
    lock = threading.Lock()

    def pump(rank, fd):
        with os.fdopen(fd, "r", errors="replace") as stream:
            for line in iter(stream.readline, ""):
                with lock:
                    sys.stdout.write(f"[rank{rank}]:{line}")
                    sys.stdout.flush()

    def stop(signum, _frame):
        for pid, _fd in children:
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    os.makedirs(os.path.join(out_dir, ".demo_barrier"), exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    gc.freeze()  # the collector never touches the parent's objects in a child: fewer pages copied
    for rank in range(ranks):
        rd, wr = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rd)
            for _pid, fd in children:
                os.close(fd)  # the earlier ranks' pipes are the parent's to read
            become_rank(rank, ranks, wr, out_dir, steps, step_ms)  # never returns
        os.close(wr)
        children.append((pid, rd))
        if nodes > 1:
            place(out_dir, rank, pid, ranks, nodes)
    threads = [threading.Thread(target=pump, args=(r, fd), daemon=True) for r, (_pid, fd) in enumerate(children)]
    for t in threads:
        t.start()
    codes = [wait_exit(pid) for pid, _fd in children]
    for t in threads:
        t.join(timeout=2)
    failed = [c for c in codes if c != 0]
    sys.exit(failed[0] if failed else 0)


def wait_exit(pid):
    """the child's exit as subprocess reports it: its code, or -N when signal N ended it (waitpid
    is retried by Python itself when `stop` interrupts it)"""
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def become_rank(rank, world, out_fd, out_dir, steps, step_ms):
    """The forked child turns into rank `rank` as an exec'd rank would start: its environment, the
    default signal actions, its output on the pipe, nsa-dbg's stack hook registered (the hook runs
    at an interpreter's start; a fork inherits the parent's, which did not register: no RANK), then
    the training loop. It ends as a Python process ends: atexit handlers, exit code 1 after an
    uncaught exception, and death by SIGINT after an uncaught KeyboardInterrupt."""
    code = 1
    try:
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        os.close(out_fd)
        os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank))
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        register = getattr(sys.modules.get("sitecustomize"), "_nsa_dbg_stacks", None)
        if register is not None:
            register()
        code = run_rank(out_dir, steps, step_ms)
    except KeyboardInterrupt:
        traceback.print_exc()
        code = -signal.SIGINT
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            if code < 0:
                signal.signal(-code, signal.SIG_DFL)
                os.kill(os.getpid(), -code)
            os._exit(code)


def place(out_dir, rank, pid, ranks, nodes):
    """--nodes N: the ranks as a launcher spreads them over N nodes (consecutive ranks share one),
    recorded the way each node's agent records its workers on a real cluster (nodes.jsonl: task,
    node, pid, rank, localRank), so nsa-dbg asks each simulated node as it asks a real one"""
    per = -(-ranks // nodes)
    task = rank // per
    rec = {"task": task, "node": f"sim-node-{task:02d}", "pid": pid, "rank": rank, "localRank": rank % per}
    with open(os.path.join(out_dir, "nodes.jsonl"), "a") as f:
        f.write(json.dumps(rec) + "\n")


class Rank:
    def __init__(self, out_dir, steps, step_ms):
        self.rank = int(os.environ["RANK"])
        self.world = int(os.environ["WORLD_SIZE"])
        self.out = out_dir
        self.steps = steps
        self.step_s = step_ms / 1000.0
        if MODE == "straggler" and self.rank == self.world - 1:
            self.step_s *= SLOWER
        self.hb = os.path.join(out_dir, f"heartbeat_rank{self.rank}.jsonl")
        self.barrier = os.path.join(out_dir, ".demo_barrier")

    def beat(self, step, msg, **extra):
        rec = {"ts": time.time(), "pid": os.getpid(), "rank": self.rank, "step": step, "msg": msg}
        rec.update(extra)
        with open(self.hb, "a") as f:
            f.write(json.dumps(rec) + "\n")

    def dump_stack(self, signum, _frame):
        frames = sys._current_frames()
        name = os.path.join(self.out, f"stackdump_{int(time.time())}.txt")
        with open(name, "w") as f:
            f.write(f"Signal {signum} at {time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime())}Z\n")
            for th in threading.enumerate():
                f.write(f"\n--- Thread: {th.name} ({th.ident}) ---\n")
                if th.ident in frames:
                    f.write("".join(traceback.format_stack(frames[th.ident])))

    def forward(self, step):
        time.sleep(self.step_s / 2)
        if MODE == "crash" and self.rank == self.world - 1 and step == AT_STEP:
            open(os.path.join(self.barrier, "failed"), "w").close()
            raise ValueError(f"bad batch at step {step}: label 7 out of range on rank {self.rank}")
        return 5.7 - 0.01 * step

    def backward(self, step):
        if MODE == "stall" and self.rank == self.world - 1 and step == AT_STEP:
            while True:
                time.sleep(0.05)
        time.sleep(self.step_s / 2)

    def all_reduce(self, step):
        """every rank's file for this step. Meanwhile the main thread waits in one blocking C call (a
        pipe read) with SIGUSR1 and SIGUSR2 blocked, as a rank inside a native collective does: no
        Python handler can run until it returns, while a C-level handler (faulthandler) can still
        dump every thread (the signal goes to the helper thread that watches the barrier)."""
        signals = {signal.SIGUSR1, signal.SIGUSR2}
        signal.pthread_sigmask(signal.SIG_BLOCK, signals)
        # one folder per step, so an arrival lists at most one entry per rank; the rank that sees
        # every rank arrived marks the step done (the last to arrive always does), and the others
        # only look for that mark: at 512 ranks on 2 cores, waiting must cost next to nothing
        here = os.path.join(self.barrier, f"step{step}")
        os.makedirs(here, exist_ok=True)
        open(os.path.join(here, f"rank{self.rank}"), "w").close()
        done = os.path.join(here, "done")
        if len(os.listdir(here)) >= self.world and not os.path.exists(done):
            open(done, "w").close()
        failed_mark = os.path.join(self.barrier, "failed")
        rd, wr = os.pipe()
        failed = []

        def watch():
            signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)
            t0 = time.time()
            pause = 0.02
            while True:
                if os.path.exists(failed_mark):
                    time.sleep(0.5)  # the peer's exit reaches the others a moment later
                    failed.append(True)
                    break
                if os.path.exists(done):
                    break
                # a step's wait is short (looked at every 20 ms); a long one is a stall, looked at
                # less and less often, up to every 2 s: 511 ranks waiting 5 times a second each kept
                # this 2-core machine's CPUs busy (load ~100), and the node commands of the nsa-dbg
                # being measured took 7 s each
                time.sleep(pause)
                if time.time() - t0 > 1:
                    pause = min(pause * 1.5, 2.0)
            os.write(wr, b"x")

        threading.Thread(target=watch, daemon=True).start()
        os.read(rd, 1)
        os.close(rd)
        os.close(wr)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)
        if failed:
            raise RuntimeError("[demo] all_reduce: Connection closed by peer")

    def run(self):
        signal.signal(signal.SIGUSR1, self.dump_stack)
        self.beat(0, "boot", phase="start")
        for step in range(1, self.steps + 1):
            self.beat(step, "beat", phase="step_start")
            t0 = time.time()
            loss = self.forward(step)
            self.backward(step)
            self.all_reduce(step)
            toks = 512 / max(time.time() - t0, 1e-6)
            self.beat(step, "progress", loss=loss, toks_per_s=toks)
            if self.rank == 0:
                print(f"step {step:04d} | loss {loss:.4f} | lr 1.00e-04 | toks/s {toks:.0f}", flush=True)
        if self.rank == 0:
            print(json.dumps({"steps": self.steps, "loss_last": loss}), flush=True)


def run_rank(out_dir, steps, step_ms):
    """one rank's training; its exit code (the traceback printed when it raised)"""
    try:
        Rank(out_dir, steps, step_ms).run()
    except Exception:
        traceback.print_exc()
        sys.stdout.flush()
        return 1
    return 0


def main(argv, ranks, steps, step_ms, out_dir, nodes=1):
    if "RANK" not in os.environ:
        parent(ranks, out_dir, nodes, steps, step_ms)
        return
    sys.exit(run_rank(out_dir, steps, step_ms))  # a rank started by a launcher of its own
