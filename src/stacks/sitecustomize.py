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

Only ranks register: with NSA_DBG_STACK_WORKERS=1 (a launcher such as torchrun starts the ranks)
only processes with RANK set; a process started by a rank for its own work (a DataLoader worker,
a compile worker) inherits the rank's marker and does not.
"""


def _nsa_dbg_stacks():
    import os

    sig_text = os.environ.get("NSA_DBG_STACK_SIGNAL", "12")
    out_dir = os.environ.get("NSA_DBG_STACK_DIR")
    if not out_dir or sig_text in ("", "0", "off"):
        return
    rank = os.environ.get("RANK")
    if os.environ.get("NSA_DBG_STACK_WORKERS") == "1" and rank is None:
        return  # the launcher itself (torchrun's agent): never signalled
    rank = rank if (rank or "").isdigit() else "0"
    if os.environ.get("NSA_DBG_STACK_RANK") == rank:
        return  # a process this rank started: the rank itself answers
    import faulthandler
    import json
    import signal
    import socket
    import sys
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
    os.environ["NSA_DBG_STACK_RANK"] = rank


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
