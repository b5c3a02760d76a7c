/**
 * Takes one rank's stack and records how it went. SIGUSR1 goes only to a pid whose SigCgt shows a
 * handler (without one the default action kills it); a handler can only run between bytecodes, so
 * a dump that does not appear within 5 s means the main thread is outside Python (a long native op,
 * a collective, a CUDA sync). Without a handler, py-spy reads the stack from outside when the box
 * has it. Every request is appended to the run's probe file with its outcome, so the verdict, live
 * or in `analyze`, reads the same record.
 */
import type { DumpOutcome, DumpRequestEvent, ProbeEvent, WorkerEvent } from '../ingest/events.js';
import { IN_PYTHON_S, SEEN_WAIT_S, stackDumpName, stackRequestId } from '../ingest/stack-log.js';
import type { Target } from '../targets/target.js';
import { ProbeFile } from './probe-file.js';
import { ProcBatcher, type ProcReadingWithSignals, SignalBatcher } from './proc-batch.js';
import { catchesSignal, SIGNUM } from './signals.js';

/** how long a dump may take to appear before the main thread is called blocked outside Python */
export const DUMP_WAIT_MS = 5000;
/** how long the stack hook's dump may take to be read back (written at once; the log is followed) */
const HOOK_WAIT_MS = 3000;
/** how far our estimate of the trainer's clock may lag it (it is bounded by the files' arrival) */
const CLOCK_SLACK_S = 0.5;

export interface StackSamplerOptions {
  target: Target;
  /** where nsa-dbg writes its probe file */
  runDir: string;
  /** the probe file's writer when other checks write to it too (default: one of its own) */
  probes?: ProbeFile;
  /** where the trainer writes its dumps (py-spy output goes there too) */
  outDir: string;
  /** dump files seen so far (name → its timestamp, trainer clock) */
  dumpsSeen: () => Array<{ file: string; ts?: number }>;
  /** a dump the evidence holds, by its name (a stack hook's dump: `<log>@<request id>`) */
  dumpNamed?: (name: string) => { inPython?: boolean; inPythonBy?: number } | undefined;
  /** each rank's process as nsa-dbg's stack hook registered it */
  workers?: () => ReadonlyMap<number, WorkerEvent>;
  /** the trainer's clock now, epoch seconds */
  trainerNowS: () => number;
  pollMs?: number;
}

/** a request that leaves no record (the run is ending, or the process is gone) */
function unrecordedRequest(
  at: number,
  rank: number,
  pid: number,
  purpose: DumpRequestEvent['purpose'],
): DumpRequestEvent {
  return { kind: 'dump-request', ts: at, rank, pid, outcome: 'no-handler', purpose };
}

export class StackSampler {
  private pySpy: Promise<boolean> | null = null;
  /** the run's probe file, shared with the other checks that write to it */
  private readonly probes: ProbeFile;
  /** stack requests, one at a time */
  private queue: Promise<void> = Promise.resolve();
  /** the next signal waits for this second (trainer clock): the last dump's name is taken */
  private nextSecondS = 0;
  /**
   * stack-hook requests whose `# in-python` mark may still come on their own (name → when the
   * window ends at the latest, trainer clock): a stop before then could make Python run and read as
   * the rank's answer. Each leaves once its dump says (see quiet()).
   */
  private readonly hookWindows = new Map<string, number>();
  /** the second the last filed dump is named by (its own clock, not our estimate of it) */
  private lastDumpS = Number.NEGATIVE_INFINITY;
  private closed = false;
  /** stack hook requests under way (they do not queue) */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** many ranks' /proc reads and signals, together (src/runs/proc-batch.ts) */
  private readonly procs: ProcBatcher;
  private readonly signals: SignalBatcher;
  /** when each rank was last asked (trainer clock), queued requests included */
  private readonly asked = new Map<number, number>();
  /** requests under way per rank */
  private readonly underWay = new Map<number, number>();
  /** when each rank's newest answered request was made (trainer clock) */
  private readonly answered = new Map<number, number>();

  constructor(private readonly o: StackSamplerOptions) {
    this.probes = o.probes ?? new ProbeFile(o.target, o.runDir);
    this.procs = new ProcBatcher(o.target);
    this.signals = new SignalBatcher(o.target);
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
   * a record, and one in flight is not recorded either (what a dying process does is no evidence).
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
    while (this.o.trainerNowS() < this.nextSecondS || this.hookWindowOpen()) await sleep(50);
  }

  /**
   * Whether a recent hook request's answer may still come: its dump does not say yet whether Python
   * ran, and the time its marks allow is not over. A hook that marks `# seen` is timed from that
   * mark (a second), which a loaded box delays; without the dump read back, a second after the send
   */
  private hookWindowOpen(): boolean {
    const now = this.o.trainerNowS();
    for (const [name, latest] of this.hookWindows) {
      const d = this.o.dumpNamed?.(name);
      const end =
        d === undefined ? latest - SEEN_WAIT_S : Math.min(latest, (d.inPythonBy ?? 0) + CLOCK_SLACK_S);
      if (d?.inPython !== undefined || now >= end) this.hookWindows.delete(name);
    }
    return this.hookWindows.size > 0;
  }

  /** whether a stack request of `rank` made at or after `sinceS` (trainer clock) got a dump */
  answeredSince(rank: number, sinceS: number): boolean {
    return (this.answered.get(rank) ?? Number.NEGATIVE_INFINITY) >= sinceS;
  }

  /** when `rank` was last asked for its stack (trainer clock), if ever */
  lastAskedS(rank: number): number | undefined {
    return this.asked.get(rank);
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

  private hasPySpy(): Promise<boolean> {
    this.pySpy ??= this.o.target
      .exec(['sh', '-c', 'command -v py-spy'], { timeoutMs: 10_000 })
      .then((r) => r.code === 0)
      .catch(() => false);
    return this.pySpy;
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
    this.asked.set(rank, this.o.trainerNowS());
    // the stack hook answers at once and names its dumps by rank and pid: a rank that has it is
    // asked now, beside any other; only the trainer's own handler needs one request at a time
    const w = this.hooked(rank, pid);
    if (w !== undefined) {
      const flight = this.requestHooked(rank, pid, w, purpose, opts.batch === true, opts.facts);
      this.inFlight.add(flight);
      void flight.finally(() => this.inFlight.delete(flight));
      return this.counted(rank, flight);
    }
    return this.counted(rank, this.queued(rank, pid, purpose));
  }

  /** whether a request of `rank` (and the trainer's own dump it may lead to) is still under way */
  busyWith(rank: number): boolean {
    return (this.underWay.get(rank) ?? 0) > 0;
  }

  private counted<T>(rank: number, p: Promise<T>): Promise<T> {
    this.underWay.set(rank, (this.underWay.get(rank) ?? 0) + 1);
    const done = () => {
      const n = (this.underWay.get(rank) ?? 1) - 1;
      if (n > 0) this.underWay.set(rank, n);
      else this.underWay.delete(rank);
    };
    p.then(done, done);
    return p;
  }

  /** the trainer's own handler's ladder, after every request queued before it */
  private queued(
    rank: number,
    pid: number,
    purpose: DumpRequestEvent['purpose'],
    after?: string,
  ): Promise<DumpRequestEvent> {
    const next = this.queue.then(() => this.requestNow(rank, pid, purpose, after));
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
    this.hookWindowOpen(); // (drops the windows that are over: the map stays as small as the last seconds' requests)
    this.hookWindows.set(name, this.o.trainerNowS() + SEEN_WAIT_S + IN_PYTHON_S + CLOCK_SLACK_S);
    const got = await this.until(() => this.o.dumpNamed?.(name) !== undefined, HOOK_WAIT_MS);
    let ev: DumpRequestEvent;
    if (!got) ev = { ...unrecorded, outcome: 'none-within-5s' };
    // (a hook's dump is no answer from Python: `answered` counts those, the trainer's own)
    else ev = { kind: 'dump-request', ts: at, rank, pid, outcome: 'faulthandler', purpose, file: name };
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

  private async requestNow(
    rank: number,
    pid: number,
    purpose: DumpRequestEvent['purpose'],
    /** the hook's dump this request follows (DumpRequestEvent.after) */
    after?: string,
  ): Promise<DumpRequestEvent> {
    const { target } = this.o;
    while (this.o.trainerNowS() < this.nextSecondS && !this.closed)
      await sleep(Math.min(this.o.pollMs ?? 100, 100));
    const at = this.o.trainerNowS();
    const unrecorded = unrecordedRequest(at, rank, pid, purpose);
    if (this.closed) return unrecorded;
    const status = await target.procStatus(pid);
    // a process that is gone (or exiting) says nothing about where it was: no record at all, or a
    // rank stopped after its hang was confirmed would look unanswered instead of blocked
    if (status === null || /^State:\s*[ZX]/m.test(status)) return unrecorded;
    const sigCgt = /^SigCgt:\s*([0-9a-fA-F]+)/m.exec(status ?? '')?.[1];
    let outcome: DumpOutcome;
    let file: string | undefined;
    if (sigCgt !== undefined && catchesSignal(sigCgt, SIGNUM.USR1!)) {
      const before = new Set(this.o.dumpsSeen().map((d) => d.file));
      await target.signal(pid, 'USR1').catch(() => undefined);
      const dump = await this.waitForDump(before, at);
      file = dump?.file;
      outcome = file === undefined ? 'none-within-5s' : 'written';
      if (dump !== undefined) {
        // the next dump must be named by a later second than this one: counted from the second in
        // its name (the trainer's clock), since our estimate of that clock can be a second off
        if (dump.ts !== undefined) this.lastDumpS = Math.max(this.lastDumpS, Math.floor(dump.ts));
        this.nextSecondS = Math.max(Math.floor(this.o.trainerNowS()), this.lastDumpS) + 1;
      }
    } else if (status !== null && (await this.hasPySpy())) {
      file = await this.pySpyDump(pid, at);
      outcome = file === undefined ? 'no-handler' : 'py-spy';
    } else outcome = 'no-handler';
    const ev: DumpRequestEvent = {
      kind: 'dump-request',
      ts: at,
      rank,
      pid,
      outcome,
      purpose,
      ...(after === undefined ? {} : { after }),
    };
    if (file !== undefined) {
      ev.file = file;
      this.answered.set(rank, at);
    }
    if (this.closed) return ev;
    await this.record(ev);
    return ev;
  }

  private async waitForDump(
    before: Set<string>,
    atS: number,
  ): Promise<{ file: string; ts?: number } | undefined> {
    const deadline = Date.now() + DUMP_WAIT_MS;
    // closed: the run is being stopped and this request will not be recorded, so the stop need not
    // wait out the 5 s (a dump that still comes is filed with no rank)
    while (Date.now() < deadline && !this.closed) {
      // a new file, or one rewritten since (dump names are whole seconds: a second dump in the same
      // second overwrites the first); never the file filed for the request before this one
      // the stack hook's own dumps (`<log>@<id>`) are not the trainer's answer
      const hit = this.o
        .dumpsSeen()
        .find(
          (d) =>
            !d.file.includes('@') &&
            (!before.has(d.file) ||
              (d.ts !== undefined && d.ts >= Math.floor(atS) && Math.floor(d.ts) > this.lastDumpS)),
        );
      if (hit !== undefined) return hit;
      await sleep(this.o.pollMs ?? 100);
    }
    return undefined;
  }

  private async pySpyDump(pid: number, atS: number): Promise<string | undefined> {
    const r = await this.o.target
      .exec(['py-spy', 'dump', '--pid', String(pid)], { timeoutMs: 30_000 })
      .catch(() => null);
    if (r === null || r.code !== 0) return undefined;
    // the epoch second in the name is the dump's time (py-spy prints none)
    const name = `pyspy_${pid}_${atS.toFixed(3)}.txt`;
    await this.o.target.writeFile(`${this.o.outDir}/${name}`, r.stdout);
    return name;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
