"""nsa-dbg's stack hook, imported by every Python process of a run nsa-dbg launches (it is first on
PYTHONPATH; the sitecustomize that was importable before is run after it, so nothing of the user's
is lost).

In each rank's process it registers Python's faulthandler for all threads on nsa-dbg's signal
(NSA_DBG_STACK_SIGNAL, default SIGUSR2): the stacks are written from C at once, without the GIL,
also while the main thread is blocked in a collective, a CUDA sync or a long native call. They go
to `nsa-dbg-stacks_rank{R}_pid{P}.log` in NSA_DBG_STACK_DIR, after a header line naming the rank,
pid and host. nsa-dbg appends a `# request <id> <time>` line before each signal, so each dump is the
bytes after its request. A Python-level handler chained behind it appends `# in-python <time>`
when the main thread next runs Python: a dump followed by that line at once was taken in Python
code; without it, in native code.

Only ranks register. A launcher never does: torchrun (`python -m torch.distributed.run`),
`accelerate launch` and DeepSpeed's launchers know themselves by their own command line, whether a
lane's `launcher:` or the user's command started them (an agent filed as rank 0 would stand in for
the real rank 0, which then never registered). With NSA_DBG_STACK_WORKERS=1 (nsa-dbg knows that a
launcher which sets RANK starts the ranks) only processes with RANK set register. A rank's number
comes from its own environment: RANK, else the rank of an MPI or Slurm task; the header's
`rank_var` names the variable, or is null when there was none (the rank is then a guess of 0 that
the run's heartbeats may correct: one pid, one rank). A process started by a rank for its own work
(a DataLoader worker, a compile worker) inherits the rank's marker and does not register.
"""

# `python -m <module>` of a launcher
_LAUNCHER_MODULES = {
    "torch.distributed.run",
    "torch.distributed.launch",
    "accelerate.commands.launch",
    "deepspeed.launcher.launch",
    "deepspeed.launcher.runner",
}
# console scripts of launchers (`accelerate` only with `launch`)
_LAUNCHER_SCRIPTS = {"torchrun", "deepspeed", "accelerate-launch"}
# where MPI and Slurm put a task's rank, for ranks whose launcher sets no RANK (srun, mpirun)
_TASK_RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")


def _nsa_dbg_is_launcher(argv):
    """whether this interpreter's own command line (sys.orig_argv) starts a launcher"""
    import os

    i = 1
    while i < len(argv) and argv[i].startswith("-") and argv[i] not in ("-", "--"):
        word = argv[i]
        i += 1
        if word.startswith("--"):
            continue  # --version and the like take no value
        # single-letter options, maybe run together (`-um mod`, `-mmod`, `-Werror`)
        for k, letter in enumerate(word[1:], start=2):
            rest = word[k:]
            if letter == "c":
                return False  # `-c code`: no module, no script
            if letter == "m":
                module = rest or (argv[i] if i < len(argv) else "")
                after = argv[i:] if rest else argv[i + 1 :]
                if module == "accelerate.commands.accelerate_cli":
                    return after[:1] == ["launch"]
                return module in _LAUNCHER_MODULES
            if letter in ("W", "X"):
                i += 0 if rest else 1  # their value: the rest of the word, else the next word
                break
    if i >= len(argv):
        return False
    script = os.path.basename(argv[i])
    if script == "accelerate":
        return argv[i + 1 : i + 2] == ["launch"]
    return script in _LAUNCHER_SCRIPTS


def _nsa_dbg_rank(env):
    """(rank, the variable it came from); (None, None) when there is none"""
    for var in ("RANK",) + (() if env.get("NSA_DBG_STACK_WORKERS") == "1" else _TASK_RANK_VARS):
        value = env.get(var, "")
        if value.isdigit():
            return value, var
    return None, None


def _nsa_dbg_stacks():
    import os

    sig_text = os.environ.get("NSA_DBG_STACK_SIGNAL", "12")
    out_dir = os.environ.get("NSA_DBG_STACK_DIR")
    if not out_dir or sig_text in ("", "0", "off"):
        return
    import sys

    if _nsa_dbg_is_launcher(getattr(sys, "orig_argv", None) or _nsa_dbg_cmdline()):
        return  # a launcher (torchrun's agent): never signalled, its workers are the ranks
    found, rank_var = _nsa_dbg_rank(os.environ)
    if os.environ.get("NSA_DBG_STACK_WORKERS") == "1" and found is None:
        return  # not a rank: the launcher's own helper process
    # the marker is the rank as the environment gave it ("" for none): a process with another RANK
    # than the one that registered was started as a rank of its own (by a launcher), not for its work
    marker = found or ""
    if os.environ.get("NSA_DBG_STACK_RANK") == marker:
        return  # a process this rank started: the rank itself answers
    rank = found or "0"
    import faulthandler
    import json
    import signal
    import socket
    import threading
    import time

    sig = int(sig_text)
    pid = os.getpid()
    path = os.path.join(out_dir, f"nsa-dbg-stacks_rank{rank}_pid{pid}.log")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError:
        return
    header = {
        "rank": int(rank),
        "rank_var": rank_var,
        "local_rank": int(os.environ.get("LOCAL_RANK", rank)),
        "pid": pid,
        "host": socket.gethostname(),
        "signal": sig,
        "main": f"0x{threading.main_thread().ident:016x}",
        "python": sys.version.split()[0],
        "path": path,
        "t": round(time.time(), 3),
    }
    os.write(fd, f"# nsa-dbg stacks {json.dumps(header)}\n".encode())

    def in_python(_signum, _frame):
        os.write(fd, f"# in-python {time.time():.3f}\n".encode())

    try:
        signal.signal(sig, in_python)
        faulthandler.register(sig, file=fd, all_threads=True, chain=True)
    except (ValueError, OSError, RuntimeError):
        os.close(fd)
        return
    os.environ["NSA_DBG_STACK_RANK"] = marker


def _nsa_dbg_cmdline():
    """the process's command line as the kernel holds it (Pythons before 3.10 lack orig_argv)"""
    try:
        with open("/proc/self/cmdline", "rb") as f:
            return [w.decode(errors="replace") for w in f.read().split(b"\0")[:-1]]
    except OSError:
        return []


def _nsa_dbg_chain():
    """run the sitecustomize that Python would have imported without nsa-dbg's"""
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if os.path.abspath(entry or ".") == here:
            continue
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [entry])
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return


try:
    _nsa_dbg_stacks()
except Exception:  # never break the user's program over a debugging aid
    pass
_nsa_dbg_chain()
