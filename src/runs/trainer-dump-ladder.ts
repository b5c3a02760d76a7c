/**
 * The trainer's own SIGUSR1 handler, one request at a time, the ladder used where nsa-dbg's stack
 * hook is not (or after its dump, for the trainer's richer one). SIGUSR1 goes only to a pid whose
 * SigCgt shows a handler (without one the default action kills it); a handler can only run between
 * bytecodes, so a dump that does not appear within 5 s means the main thread is outside Python (a
 * long native op, a collective, a CUDA sync). Without a handler, py-spy reads the stack from
 * outside when the box has it. Each signal waits for a later whole second than the dump before it:
 * nsa-vibe names dumps by the second and not by rank, so two ranks dumping in one second would
 * overwrite each other, and a dump could not be told apart from another rank's.
 */
import type { DumpOutcome, DumpRequestEvent, ProbeEvent } from '../ingest/events.js';
import type { Target } from '../targets/target.js';
import { catchesSignal, SIGNUM } from './signals.js';

/** what the ladder reads (a StackSampler's options are these and more) */
export interface LadderOptions {
  target: Target;
  /** where the trainer writes its dumps (py-spy output goes there too) */
  outDir: string;
  /** dump files seen so far (name → its timestamp, trainer clock) */
  dumpsSeen: () => Array<{ file: string; ts?: number }>;
  /** the trainer's clock now, epoch seconds */
  trainerNowS: () => number;
  pollMs?: number;
}

/** how long a dump may take to appear before the main thread is called blocked outside Python */
export const DUMP_WAIT_MS = 5000;

/** what the ladder needs of the sampler that runs it */
export interface LadderDeps {
  /** the run is being stopped: no more signals, nothing recorded */
  closed: () => boolean;
  /** append to the run's probe file */
  record: (e: ProbeEvent) => Promise<void>;
  /**
   * append a request whose signal went out, also once closed: its dump may still come, and a dump
   * no record names is filed with no rank (the stop waits for it: StackSampler.quiet)
   */
  recordSignalled: (e: ProbeEvent) => Promise<void>;
  /** `rank`'s request made at `at` (trainer clock) got a dump */
  answered: (rank: number, at: number) => void;
}

/** a request that leaves no record (the run is ending, or the process is gone) */
export function unrecordedRequest(
  at: number,
  rank: number,
  pid: number,
  purpose: DumpRequestEvent['purpose'],
): DumpRequestEvent {
  return { kind: 'dump-request', ts: at, rank, pid, outcome: 'no-handler', purpose };
}

export class TrainerDumpLadder {
  private pySpy: Promise<boolean> | null = null;
  /** the next signal waits for this second (trainer clock): the last dump's name is taken */
  private nextSecondS = 0;
  /** the second the last filed dump is named by (its own clock, not our estimate of it) */
  private lastDumpS = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly o: LadderOptions,
    private readonly d: LadderDeps,
  ) {}

  /** the second the last dump is named by is over (a new dump cannot overwrite it) */
  secondOver(): boolean {
    return this.o.trainerNowS() >= this.nextSecondS;
  }

  private hasPySpy(): Promise<boolean> {
    this.pySpy ??= this.o.target
      .exec(['sh', '-c', 'command -v py-spy'], { timeoutMs: 10_000 })
      .then((r) => r.code === 0)
      .catch(() => false);
    return this.pySpy;
  }

  /** the request, after every one before it (StackSampler queues them) */
  async request(
    rank: number,
    pid: number,
    purpose: DumpRequestEvent['purpose'],
    /** the hook's dump this request follows (DumpRequestEvent.after) */
    after?: string,
  ): Promise<DumpRequestEvent> {
    const { target } = this.o;
    while (this.o.trainerNowS() < this.nextSecondS && !this.d.closed())
      await sleep(Math.min(this.o.pollMs ?? 100, 100));
    const at = this.o.trainerNowS();
    const unrecorded = unrecordedRequest(at, rank, pid, purpose);
    if (this.d.closed()) return unrecorded;
    const status = await target.procStatus(pid);
    // a process that is gone (or exiting) says nothing about where it was: no record at all, or a
    // rank stopped after its hang was confirmed would look unanswered instead of blocked
    if (status === null || /^State:\s*[ZX]/m.test(status)) return unrecorded;
    const sigCgt = /^SigCgt:\s*([0-9a-fA-F]+)/m.exec(status ?? '')?.[1];
    let outcome: DumpOutcome;
    let file: string | undefined;
    let signalled = false;
    if (sigCgt !== undefined && catchesSignal(sigCgt, SIGNUM.USR1!)) {
      const before = new Set(this.o.dumpsSeen().map((d) => d.file));
      // closed now: no signal goes out (closed later: this one is waited for and recorded below)
      if (this.d.closed()) return unrecorded;
      await target.signal(pid, 'USR1').catch(() => undefined);
      signalled = true;
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
    const ev: DumpRequestEvent = { ...unrecorded, outcome, ...(after === undefined ? {} : { after }) };
    if (file !== undefined) {
      ev.file = file;
      ev.answeredTs = this.o.trainerNowS();
      this.d.answered(rank, at);
    }
    if (signalled) await this.d.recordSignalled(ev);
    else if (!this.d.closed()) await this.d.record(ev);
    return ev;
  }

  private async waitForDump(
    before: Set<string>,
    atS: number,
  ): Promise<{ file: string; ts?: number } | undefined> {
    const deadline = Date.now() + DUMP_WAIT_MS;
    // also once closed: the signal went out, so its dump may come, and only this request's record
    // can file it with its rank (the stop waits the at most 5 s; the verdict does not)
    while (Date.now() < deadline) {
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
