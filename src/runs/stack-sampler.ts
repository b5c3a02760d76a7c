/**
 * Takes one rank's stack and records how it went: by nsa-dbg's stack hook where the rank has it
 * (its faulthandler dump comes at once, from C, beside any other rank's), else by the trainer's own
 * handler or py-spy, one rank at a time (src/runs/trainer-dump-ladder.ts). Every request is
 * appended to the run's probe file with its outcome, so the verdict, live or in `analyze`, reads
 * the same record.
 */
import type { DumpRequestEvent, ProbeEvent, WorkerEvent } from '../ingest/events.js';
import { IN_PYTHON_S, SEEN_WAIT_S, stackDumpName, stackRequestId } from '../ingest/stack-log-format.js';
import { CLOCK_SLACK_S, HookWindows, type HookWindowsOptions } from './hook-windows.js';
import { ProbeFile } from './probe-file.js';
import { ProcBatcher, type ProcReadingWithSignals, SignalBatcher } from './proc-batch.js';
import { catchesSignal, SIGNUM } from './signals.js';
import { type LadderOptions, TrainerDumpLadder, unrecordedRequest } from './trainer-dump-ladder.js';

/** how long the stack hook's dump may take to be read back (written at once; the log is followed) */
const HOOK_WAIT_MS = 3000;

/** the ladder's and the hook windows' options, and what the sampler itself reads */
export interface StackSamplerOptions extends LadderOptions, HookWindowsOptions {
  /** where nsa-dbg writes its probe file */
  runDir: string;
  /** the probe file's writer when other checks write to it too (default: one of its own) */
  probes?: ProbeFile;
  /** each rank's process as nsa-dbg's stack hook registered it */
  workers?: () => ReadonlyMap<number, WorkerEvent>;
}

export class StackSampler {
  /** the run's probe file, shared with the other checks that write to it */
  private readonly probes: ProbeFile;
  /** stack requests, one at a time */
  private queue: Promise<void> = Promise.resolve();
  /** the trainer's own handler's ladder, one request at a time */
  private readonly ladder: TrainerDumpLadder;
  /** stack-hook requests whose `# in-python` mark may still come (src/runs/hook-windows.ts) */
  private readonly hookWindows: HookWindows;
  private closed = false;
  /** stack hook requests under way (they do not queue) */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** many ranks' /proc reads and signals, together (src/runs/proc-batch.ts) */
  private readonly procs: ProcBatcher;
  private readonly signals: SignalBatcher;
  /** per rank, when it was last asked (queued requests included), trainer clock */
  private readonly askedS = new Map<number, number>();
  /** per rank, when its newest answered request was made (trainer clock) */
  private readonly answeredS = new Map<number, number>();

  constructor(private readonly o: StackSamplerOptions) {
    this.probes = o.probes ?? new ProbeFile(o.target, o.runDir);
    this.procs = new ProcBatcher(o.target);
    this.signals = new SignalBatcher(o.target);
    this.hookWindows = new HookWindows(o);
    this.ladder = new TrainerDumpLadder(o, {
      closed: () => this.closed,
      record: (e) => this.record(e),
      recordSignalled: (e) => this.probes.record(e),
      answered: (rank, at) => this.answeredS.set(rank, at),
    });
  }

  /**
   * append one record to the probe file (src/runs/probe-file.ts). Once closed nothing is appended:
   * the run is ending, and its files' final read (the mirror's last drain, the verdict) must not be
   * overtaken by a check that was still reading /proc.
   */
  record(e: ProbeEvent): Promise<void> {
    if (this.closed) return this.probes.flushed();
    return this.probes.record(e);
  }

  /**
   * No more signals: the run is being stopped. Requests not yet started return unanswered without
   * a record. One in flight is not recorded either (what a dying process does is no evidence), but
   * for a trainer's-handler request whose signal went out: its dump names no rank, so it is waited
   * for (≤ 5 s) and recorded, and quiet() waits for that.
   */
  close(): void {
    this.closed = true;
  }

  /**
   * Every request done, the second of the last dump's name over, and the last stack-hook signal's
   * in-python window too: a dump written from now on (a blocked rank answering late, once a stop
   * frees it) cannot overwrite one already filed, and Python that runs only because the stop freed
   * a rank blocked in native code comes too late to read as that rank's answer.
   */
  async quiet(): Promise<void> {
    await this.idle();
    while (!this.ladder.secondOver() || this.hookWindows.anyOpen()) await sleep(50);
  }

  /** whether a stack request of `rank` made at or after `sinceS` (trainer clock) got a dump */
  answeredSince(rank: number, sinceS: number): boolean {
    return (this.answeredS.get(rank) ?? Number.NEGATIVE_INFINITY) >= sinceS;
  }

  /** when `rank` was last asked for its stack (trainer clock), if ever */
  lastAskedS(rank: number): number | undefined {
    return this.askedS.get(rank);
  }

  /** resolves once every request asked so far is done and recorded */
  async idle(): Promise<void> {
    await this.queue;
    // the requests under way now, not those started meanwhile: while a hang of many ranks is
    // being confirmed the prober keeps asking, and waiting for none to be in flight could be forever
    await Promise.all([...this.inFlight]);
    await this.queue;
    await this.probes.flushed();
  }

  /**
   * request rank's stack, wait for it (≤ 5 s), record and return the outcome. Requests run one at a
   * time, each signal in a later whole second than the dump before it: nsa-vibe names dumps by the
   * second and not by rank, so two ranks dumping in one second would overwrite each other, and a
   * dump could not be told apart from another rank's.
   */
  request(
    rank: number,
    pid: number,
    purpose: DumpRequestEvent['purpose'],
    opts: { batch?: boolean; facts?: ProcReadingWithSignals | null } = {},
  ): Promise<DumpRequestEvent> {
    this.askedS.set(rank, this.o.trainerNowS());
    // the stack hook answers at once and names its dumps by rank and pid: a rank that has it is
    // asked now, beside any other; only the trainer's own handler needs one request at a time
    const w = this.hooked(rank, pid);
    if (w !== undefined) {
      const flight = this.requestHooked(rank, pid, w, purpose, opts.batch === true, opts.facts);
      this.inFlight.add(flight);
      void flight.finally(() => this.inFlight.delete(flight));
      return flight;
    }
    return this.queued(rank, pid, purpose);
  }

  /** the trainer's own handler's ladder, after every request queued before it */
  private queued(
    rank: number,
    pid: number,
    purpose: DumpRequestEvent['purpose'],
    after?: string,
  ): Promise<DumpRequestEvent> {
    const next = this.queue.then(() => this.ladder.request(rank, pid, purpose, after));
    this.queue = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  /**
   * Many ranks at once (a confirmed hang's silent ranks, `d` on a run of many ranks): every rank
   * with the stack hook is asked now (their /proc reads and signals go out together, one command
   * per node), the others take the ladder one at a time, as ever.
   */
  requestMany(
    ranks: Array<[rank: number, pid: number]>,
    purpose: DumpRequestEvent['purpose'],
  ): Promise<DumpRequestEvent[]> {
    return Promise.all(ranks.map(([r, p]) => this.request(r, p, purpose, { batch: true })));
  }

  /** the rank's stack hook, when it is the one of this pid */
  private hooked(rank: number, pid: number): WorkerEvent | undefined {
    const w = this.o.workers?.().get(rank);
    return w !== undefined && w.pid === pid && w.path !== '' ? w : undefined;
  }

  /**
   * The ladder with nsa-dbg's stack hook first: its faulthandler dump comes at once from C (also
   * from a main thread blocked in native code); when the main thread runs Python right after and
   * the trainer has its own SIGUSR1 handler, that handler's richer dump is asked for too (one rank
   * at a time, as it names dumps by the second), unless this request is one of many at once.
   */
  private async requestHooked(
    rank: number,
    pid: number,
    w: WorkerEvent,
    purpose: DumpRequestEvent['purpose'],
    batch: boolean,
    /** the process's facts just read by the caller (one /proc round per node, not two) */
    fresh?: ProcReadingWithSignals | null,
  ): Promise<DumpRequestEvent> {
    const at = this.o.trainerNowS();
    const unrecorded = unrecordedRequest(at, rank, pid, purpose);
    if (this.closed) return unrecorded;
    const facts = fresh !== undefined ? fresh : await this.procs.read(pid);
    if (facts === null || facts.state === 'Z' || facts.state === 'X') return unrecorded;
    const sigCgt = facts.sigCgt || '0';
    if (!catchesSignal(sigCgt, w.signal)) {
      // the trainer replaced the hook's handler (its own signal.signal): the old ladder
      return this.queued(rank, pid, purpose);
    }
    const id = stackRequestId(at);
    const name = stackDumpName(w.file, id);
    await this.signals.send(pid, w.path, w.signal, id);
    // the box stamped the signal's send before this returned; our estimate of its clock may lag
    this.hookWindows.sent(name);
    const got = await this.until(() => this.o.dumpNamed?.(name) !== undefined, HOOK_WAIT_MS);
    // (a hook's dump is no answer from Python: `answered` counts those, the trainer's own)
    const ev: DumpRequestEvent = got
      ? { ...unrecorded, outcome: 'faulthandler', file: name, answeredTs: this.o.trainerNowS() }
      : { ...unrecorded, outcome: 'none-within-5s' };
    if (this.closed) return ev;
    await this.record(ev);
    // the trainer's own dump, when its main thread is in Python and it has a handler for it
    if (got && !batch && catchesSignal(sigCgt, SIGNUM.USR1!)) {
      await this.until(
        () => {
          const d = this.o.dumpNamed?.(name);
          return d?.inPython !== undefined || this.o.trainerNowS() > (d?.inPythonBy ?? 0) + CLOCK_SLACK_S;
        },
        (SEEN_WAIT_S + IN_PYTHON_S) * 1000,
      );
      if (this.o.dumpNamed?.(name)?.inPython === true) await this.queued(rank, pid, purpose, name);
    }
    return ev;
  }

  private async until(ok: () => boolean, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > deadline || this.closed) return false;
      await sleep(this.o.pollMs ?? 50);
    }
    return true;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
