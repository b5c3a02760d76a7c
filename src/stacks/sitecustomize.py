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
    import atexit

    set_signal = signal.signal

    def quiet_at_exit():
        """The interpreter is shutting down: a stack request from now on would have faulthandler walk
        thread states being torn down (seen: ranks dying of SIGSEGV when a straggler sample came as
        the trainer exited). The signal is ignored from here: SigCgt no longer shows it, so nsa-dbg
        stops asking, and one already on its way does nothing."""
        try:
            faulthandler.unregister(sig)
            set_signal(sig, signal.SIG_IGN)
        except (ValueError, OSError, RuntimeError):
            pass

    atexit.register(quiet_at_exit)
    try:
        _nsa_dbg_last_words(fd, pid, sig)
    except Exception:  # last words are a bonus: the SIGUSR1 dump above stands without them
        pass


# Signals that end a process and that Python code can see (SIGINT only while Python's own
# KeyboardInterrupt handler is installed: a trainer's handler means the trainer deals with it)
_TERMINATING = ("SIGTERM", "SIGINT")
# how long the main thread's handler waits for the watcher's record before writing its own
_WATCHER_WAIT_S = 0.5


def _nsa_dbg_last_words(fd, pid, stack_sig):
    """Last words: every thread's stack in the rank's stack file when something ends the process.

    Fatal C-level signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT): faulthandler.enable, which
    writes from C (no GIL needed) after a `Fatal Python error: <name>` line (the parser's marker)
    and then chains to the previous action, so the process dies as it would have. Left alone when
    something already enabled faulthandler (PYTHONFAULTHANDLER, -X faulthandler): its file wins.

    SIGTERM, SIGINT: a Python handler is installed where the action was the default (SIG_DFL;
    default_int_handler for SIGINT). A Python handler alone runs only when the main thread next
    executes bytecode: a rank blocked in a collective would never write and, worse, would no
    longer die on SIGTERM. So the handler's real work is done by a watcher thread woken through
    signal.set_wakeup_fd (Python's C-level handler writes the signal's number there at once): it
    writes `# last-words {json}`, every thread's stack and `# last-words-end`, and where nothing
    but the default was there before, restores SIG_DFL (libc, from a thread) and re-sends the
    signal, so the exit status is the default's (-15 / 143). The main-thread handler does the same
    when the watcher did not answer (the wakeup fd was taken over, e.g. by asyncio).

    A trainer that installs its own SIGTERM handler after us would replace ours (Python allows one
    handler per signal), and the watcher alone loses the race to a handler that exits at once. So
    signal.signal is wrapped: a trainer's SIGTERM handler is installed behind a step that writes the
    stacks first, then runs it as it would have run; signal.signal and signal.getsignal hand back
    the trainer's own handler (and the default for ours), so code that compares or restores them
    behaves the same. Restoring the default puts ours back, which ends the process the same way.
    A handler installed from C (not through signal.signal) is still seen by the watcher.

    The watcher also marks when a stack request (`stack_sig`) reached Python: `# seen <time>`. It
    runs as soon as the process gets a core and the GIL is free, so the main thread's `# in-python`
    mark is timed from it, not from when the signal was sent: on a loaded box (hundreds of ranks
    signalled at once on a few cores, a throttled container) both come late, and only the gap
    between them says whether the main thread was in Python. `# marks seen`, written once the
    watcher runs, tells the reader to expect them.
    """
    import faulthandler
    import functools
    import json
    import os
    import signal
    import threading
    import time

    if not faulthandler.is_enabled():
        faulthandler.enable(file=fd, all_threads=True)
    try:
        import ctypes

        libc_signal = ctypes.CDLL(None).signal
        libc_signal.argtypes = (ctypes.c_int, ctypes.c_void_p)
        libc_signal.restype = ctypes.c_void_p
    except Exception:
        libc_signal = None  # the main thread's handler ends the process instead
    previous = {}
    for name in _TERMINATING:
        sig = getattr(signal, name)
        cur = signal.getsignal(sig)
        if cur == signal.SIG_DFL or cur is signal.default_int_handler:
            previous[sig] = cur
    if not previous:
        return
    names = {int(sig): sig.name for sig in previous}
    cond = threading.Condition()
    written = dict.fromkeys(names, 0)  # records the watcher wrote, per signal
    taken = dict.fromkeys(names, 0)  # of those, the ones the main thread's handler waited for
    skip = dict.fromkeys(names, 0)  # records the handler wrote itself: the watcher's late one is dropped

    def write(sig, by):
        head = {"signal": names[sig], "signum": sig, "t": round(time.time(), 3), "pid": pid, "by": by}
        os.write(fd, f"# last-words {json.dumps(head)}\n".encode())
        faulthandler.dump_traceback(file=fd, all_threads=True)
        os.write(fd, b"# last-words-end\n")

    def ends_by_default(sig):
        return real_getsignal(sig) is handler and previous[sig] == signal.SIG_DFL

    def record(sig):
        """this delivery's record: the watcher's (waited for), else written here"""
        if os.getpid() != pid:
            return  # a forked child that kept our handler: not the rank
        with cond:
            if cond.wait_for(lambda: written[sig] > taken[sig], _WATCHER_WAIT_S if watching else 0):
                taken[sig] += 1
            else:
                skip[sig] += 1
                write(sig, "handler")

    def handler(sig, frame):
        record(sig)
        prev = previous[sig]
        if callable(prev):
            prev(sig, frame)  # default_int_handler: KeyboardInterrupt, as without the hook
            return
        real_signal(sig, signal.SIG_DFL)  # not the patched one: it would put ours back
        os.kill(os.getpid(), sig)

    real_signal, real_getsignal = signal.signal, signal.getsignal

    def covering(sig, h):
        """what signal.signal installs for (sig, h): a trainer's SIGTERM handler runs after the
        stacks are written (the watcher alone can lose that race: the handler may exit first);
        the default action is ours, which ends the process the same way"""
        s = int(sig)
        if s not in names or os.getpid() != pid:
            return h
        if h is previous[s] or (not callable(h) and h == previous[s]):  # SIG_DFL, also as 0
            return handler
        if s == signal.SIGTERM and callable(h) and h is not handler:

            def covered(signum, frame):
                record(signum)
                return h(signum, frame)

            covered._nsa_dbg_wraps = h
            return covered
        return h

    def shown(s, h):
        """what the trainer sees of an installed handler: its own, or the default for ours"""
        if h is handler:
            return previous.get(int(s), h)
        if h is sampler.handler:
            return signal.SIG_DFL  # also once given back: the trainer's "previous" is the default
        return getattr(h, "_nsa_dbg_wraps", h)

    def patched_signal(sig, h):
        if int(sig) == sampler.sig and os.getpid() == pid:
            sampler.taken()  # the trainer's own handler for it: samples go back to the stack signal
        return shown(sig, real_signal(sig, covering(sig, h)))

    def patched_getsignal(sig):
        return shown(sig, real_getsignal(sig))

    def watch(r):
        while True:
            try:
                data = os.read(r, 64)
            except InterruptedError:
                continue
            except OSError:
                return
            if not data or os.getpid() != pid:
                return
            for sig in data:
                if sig == sampler.sig:
                    sampler.write()
                    continue
                if sig == stack_sig:
                    os.write(fd, f"# seen {time.time():.3f}\n".encode())
                    continue
                if sig not in names:
                    continue  # SIGUSR1's in-python handler, a trainer's own signals
                if sig == signal.SIGINT and real_getsignal(sig) is not handler:
                    continue  # the trainer handles SIGINT itself: not an ending
                with cond:
                    if skip[sig] > 0:
                        skip[sig] -= 1
                        continue
                    write(sig, "watcher")
                    written[sig] += 1
                    cond.notify_all()
                if ends_by_default(sig) and libc_signal is not None:
                    libc_signal(sig, 0)  # SIG_DFL: the main thread may never run Python again
                    os.kill(pid, sig)

    r, w = os.pipe()
    os.set_blocking(w, False)
    old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    watching = old == -1
    if not watching:
        signal.set_wakeup_fd(old)  # someone's already: leave it to them, the handler does the work
        os.close(r)
        os.close(w)
        r = None
    for sig in previous:
        real_signal(sig, handler)
    sampler = _NsaDbgSampler(fd, pid, real_signal, real_getsignal, watching)
    # the patched functions look like the originals to code that inspects them
    functools.update_wrapper(patched_signal, real_signal)
    functools.update_wrapper(patched_getsignal, real_getsignal)
    signal.signal, signal.getsignal = patched_signal, patched_getsignal
    if watching:
        threading.Thread(target=watch, args=(r,), name="nsa-dbg-last-words", daemon=True).start()
        os.write(fd, b"# marks seen\n")
        sampler.announce()

    def in_child():
        # a forked child (a DataLoader worker) is not the rank: its signals end it as they would.
        # Its wakeup fd is our pipe's write end, shared with the rank: a SIGTERM of the child would
        # wake the rank's watcher, which would take it for its own and end the rank. Three guards,
        # each enough alone: the child's copy of the write end goes to /dev/null (dup2 cannot fail
        # on a thread), its handlers go back to what they were (no Python handler, no wakeup byte),
        # and its wakeup fd is unset
        if watching:
            try:
                nul = os.open(os.devnull, os.O_WRONLY)
                os.dup2(nul, w)
                os.close(nul)
            except OSError:
                pass
        try:
            for sig, prev in previous.items():
                if real_getsignal(sig) is handler:
                    real_signal(sig, prev)
            sampler.disarm()
            if r is not None:
                old = signal.set_wakeup_fd(-1)
                if old not in (-1, w):
                    signal.set_wakeup_fd(old)
        except ValueError:
            pass  # forked from another thread: the handler's pid check covers it

    os.register_at_fork(after_in_child=in_child)


class _NsaDbgSampler:
    """Straggler samples by their own signal (SIGURG), written by the watcher thread.

    A sample by the stack signal costs the rank a faulthandler dump from its signal handler: a
    write() per piece of every frame of every thread, ~13 µs a frame where system calls are slow
    (a 30-frame stack: ~0.4 ms; at 16 samples a second, over half a percent of the step). The
    ranking needs only the main thread's frames. So a sample has its own signal: its Python handler
    does nothing, and Python's C-level handler writes the signal's number to the wakeup fd, which
    wakes the watcher thread; the watcher takes the main thread's frames (sys._current_frames) and
    writes them in faulthandler's format, with a `# sampled <time>` mark, in one write(). The main
    thread pays a GIL hand-over at most; a main thread blocked in a collective (the GIL released)
    pays nothing. SIGURG's default action is to ignore it: a sample that comes after the handler
    is gone (the rank is exiting, a forked child) does nothing. Armed only where the watcher runs
    and nothing else handles SIGURG; `# samples <signum>` in the log tells nsa-dbg to use it,
    `# samples off` (the trainer installed its own handler for it) to go back to the stack signal.
    """

    MAX_FRAMES = 100  # as faulthandler: deeper frames are one `...` line

    def __init__(self, fd, pid, real_signal, real_getsignal, watching):
        import signal

        self.fd, self.pid = fd, pid
        self.real_signal, self.real_getsignal = real_signal, real_getsignal
        self.sig = None
        self.on = False

        def handler(_signum, _frame):
            pass  # the wakeup byte is the point: the watcher writes the sample

        self.handler = handler
        sig = getattr(signal, "SIGURG", None)
        if not watching or sig is None or real_getsignal(sig) != signal.SIG_DFL:
            return
        try:
            real_signal(sig, handler)
        except (ValueError, OSError):
            return
        self.sig, self.on = int(sig), True

    def announce(self):
        if self.sig is not None:
            import os

            os.write(self.fd, f"# samples {self.sig}\n".encode())

    def write(self):
        import os
        import sys
        import threading
        import time

        if not self.on or self.real_getsignal(self.sig) is not self.handler or os.getpid() != self.pid:
            return
        main = threading.main_thread().ident
        f = sys._current_frames().get(main)
        if f is None:
            return  # the main thread is gone (interpreter shutdown): no sample, none counted
        lines = [f"Thread 0x{main:016x} (most recent call first):"]
        while f is not None and len(lines) <= self.MAX_FRAMES:
            line = f.f_lineno if f.f_lineno is not None else 0
            lines.append(f'  File "{f.f_code.co_filename}", line {line} in {f.f_code.co_name}')
            f = f.f_back
        if f is not None:
            lines.append("  ...")
        lines.append(f"# sampled {time.time():.3f}\n")
        os.write(self.fd, "\n".join(lines).encode(errors="replace"))

    def taken(self):
        """the trainer set its own handler for the signal: no more samples by it"""
        if self.on:
            import os

            self.on = False
            os.write(self.fd, b"# samples off\n")

    def disarm(self):
        """a forked child: its samples, if any came, are ignored as by default"""
        import signal

        if self.on and self.real_getsignal(self.sig) is self.handler:
            self.real_signal(self.sig, signal.SIG_DFL)


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
