/**
 * The evidence's intake: events and files go in as they arrive (live) or as a folder is read
 * (offline). Only facts are collected here; evidence.ts asks them, and verdict.ts decides. The
 * run-folder reader (src/ingest/run-folder.ts) is the only writer in the product; whatever the
 * interleaving of its files, the facts collected are the same (evidence-state.ts says how).
 */
import type { BeatEvent, GpuSample, IngestEvent, StepSource, TracebackEvent } from '../ingest/events.js';
import { SOURCE_PRIORITY } from '../ingest/events.js';
import type { At } from '../ingest/order.js';
import { slurmCancelOf } from '../ingest/slurm-cancel.js';
import { addHit } from './evidence-facts.js';
import type { EvidenceState, StepContext } from './evidence-state.js';
import type { ProgressRecord } from './progress-tracker.js';
import { matchOutput, matchSource, type Signature } from './signatures.js';
import { inCollective, programFrames } from './stack-diff.js';
import { type StepRecord, setEnd, setLoss, setToks } from './step-stats.js';
import { RankSteps, windowFor } from './step-store.js';
import type { WorkerRanks } from './worker-ranks.js';

const EXIT_LINE = /^== exit (-?\d+)/;
const MISSING = /missing=(\d+)/;
/** probe records kept (a multi-day run probes only while a rank is silent; this bounds the worst case) */
const MAX_PROBES = 20_000;
const BEAT = SOURCE_PRIORITY.beat;
/** when a step ended: a heartbeat's own time beats an output line's or a CSV row's arrival */
const END_PRIORITY: Record<StepSource, number> = { beat: 3, output: 2, table: 1 };

export class EvidenceIntake {
  /** pid of the process whose heartbeats we hold, per rank (files are appended across re-runs) */
  private readonly hbPid = new Map<number, number>();
  /** for callers that feed events without a stream (tests, the bench): one stream in call order */
  private seq = 0;

  /** `workerRanks`: the stack hook's registrations, one pid one rank (s.workers is its placement) */
  constructor(
    protected readonly s: EvidenceState,
    protected readonly workerRanks: WorkerRanks,
  ) {}

  /** One event of a stream. `at`: its stream and place there (the reader's); default: call order. */
  addEvent(e: IngestEvent, at: At = { stream: '', seq: this.seq++ }): void {
    const s = this.s;
    s.revision++;
    switch (e.kind) {
      case 'beat':
        this.addBeat(e, at);
        return;
      case 'step': {
        s.ranks.add(e.rank);
        s.cadence.add(e.rank, e.step, e.format, e.total);
        const r = this.stepDone('output', e.rank, e.step, e.loss, e.toksPerS, e.ts);
        if (e.seconds !== undefined) r.seconds ??= e.seconds;
        if (e.loss !== undefined && !Number.isFinite(e.loss))
          s.nanHits.push({ rank: e.rank, step: e.step, at });
        return;
      }
      case 'log':
        this.addLog(e, at);
        return;
      case 'traceback':
        this.addTraceback(e, at);
        return;
      case 'metrics': {
        s.outputMetrics = e.metrics;
        // a closing summary's step count is the last step done (log_every may have hidden it)
        const n = e.metrics.steps;
        if (typeof n === 'number' && Number.isInteger(n) && n > 0)
          s.summarySteps = Math.max(s.summarySteps, n);
        return;
      }
      case 'proc':
      case 'dump-request':
        s.probing = true;
        if (e.kind === 'proc') pushBounded(s.procProbes, e);
        else pushBounded(s.dumpRequests, e);
        this.seenAt(e.ts);
        return;
      case 'teardown':
      case 'oom-kill':
        // what nsa-dbg saw as the run ended: no step, no silence (not the clock a run is judged at)
        if (e.kind === 'teardown') pushBounded(s.teardowns, e);
        else pushBounded(s.oomKills, e);
        return;
      case 'stack-sample': {
        // the rank its pid is placed at (a guessed rank is corrected by the pid's heartbeats)
        let rank = e.rank;
        for (const [r, w] of s.workers) if (w.pid === e.pid) rank = r;
        const c = s.stackSamples.get(rank) ?? { samples: 0, waiting: 0 };
        const round = s.sampleRounds.get(e.id) ?? { n: 0, waiting: 0, lone: -1 };
        c.samples++;
        round.n++;
        if (inCollective(programFrames(e.dump))) {
          c.waiting++;
          round.waiting++;
        } else round.lone = round.lone === -1 ? rank : -2;
        s.stackSamples.set(rank, c);
        s.sampleRounds.set(e.id, round);
        return;
      }
      case 'worker':
        // its rank is where worker-ranks.ts places it (a guessed one, where its pid beats)
        this.workerRanks.add(e);
        return;
      case 'output-format':
        if (e.inferred !== undefined) s.inferredFormat = e.inferred;
        if (e.unrecognised !== undefined) s.unrecognised = e.unrecognised;
        return;
      case 'flight-recorder':
        s.flightRecorder.set(e.file, e);
        return;
      case 'last-words':
        // re-read as it grows: the newest parse of a record replaces the earlier one
        // (not the clock a run is judged at: a run killed while it made progress is no hang)
        s.lastWords.set(e.name, e);
        return;
      case 'dump':
        // the same file re-read as it grew replaces its earlier parse; what a dump implies (a
        // watchdog, missing gradients) is read from the final parse when the verdict is made
        s.dumps.set(e.file, e);
        if (e.ts !== undefined) this.seenAt(e.ts);
        return;
    }
  }

  /** a row of the trainer's CSV table (training.csv): step, loss and toks/s of rank 0 */
  addTableRow(step: number, loss: number, toksPerS: number, ts?: number): void {
    this.stepDone('table', 0, step, loss, Number.isFinite(toksPerS) ? toksPerS : undefined, ts);
  }

  /** a step's numbers from a step line or a CSV row; its end, where the source timed it, moves the detector */
  private stepDone(
    source: 'output' | 'table',
    rank: number,
    step: number,
    loss: number | undefined,
    toksPerS: number | undefined,
    ts: number | undefined,
  ): StepRecord {
    const r = this.record(rank, step);
    if (loss !== undefined) setLoss(r, loss, SOURCE_PRIORITY[source]);
    if (toksPerS !== undefined) setToks(r, toksPerS, SOURCE_PRIORITY[source]);
    this.progressed(source, rank, { done: step });
    if (ts !== undefined) {
      setEnd(r, ts, END_PRIORITY[source]);
      this.observe({ rank, step, ts, msg: 'step_end' }, source);
    }
    return r;
  }

  /** progress from a source other than heartbeats, with its arrival time: the detector learns it too */
  private observe(p: ProgressRecord, source: StepSource): void {
    this.s.detector.observe(p, source);
    this.seenAt(p.ts);
  }

  private addLog(e: Extract<IngestEvent, { kind: 'log' }>, at: At): void {
    const s = this.s;
    const rank = e.rank ?? 0;
    if (e.rank !== undefined) s.ranks.add(e.rank);
    if (e.step !== undefined && e.tag === 'debug') {
      this.progressed('output', rank, { announced: e.step });
      // a per-step marker (`[debug] step N:`) is the step's start
      if (e.ts !== undefined) this.observe({ rank, step: e.step, ts: e.ts, msg: 'beat' }, 'output');
    }
    // slurmstepd's `*** JOB 12 ON node1 CANCELLED AT … ***`: the ranks' SIGTERM was Slurm's
    s.slurmCancel ??= slurmCancelOf(e.text);
    if (e.tag === 'capture') {
      const m = EXIT_LINE.exec(e.text);
      if (m !== null) s.exitFromLog = Number(m[1]);
    } else if (e.tag === 'torchrun' && e.rank !== undefined) {
      const code = /exitcode: (-?\d+)/.exec(e.text);
      s.torchrunFailed.push({ rank: e.rank, exitCode: code ? Number(code[1]) : 1, at });
    } else if (e.tag === 'grad-trace') {
      const m = MISSING.exec(e.text);
      if (m !== null && Number(m[1]) > 0) s.missingGrads.push({ rank, step: e.step, missing: Number(m[1]) });
    }
    for (const sig of matchOutput(e.text)) {
      this.hit(sig, e.text, e.rank, at);
      // the FATAL line comes before the step is logged: the step it is about is the current one
      if (sig.implies === 'nan') s.nanHits.push({ rank, step: null, at, ctx: this.outputContext(rank) });
    }
  }

  private addTraceback(e: TracebackEvent, at: At): void {
    const s = this.s;
    const rank = e.rank ?? e.torchrun?.rootCauseRank ?? undefined;
    if (rank !== undefined) s.ranks.add(rank);
    s.tracebacks.push({ ev: e, at, ctx: this.outputContext(rank ?? 0) });
    const text = `${e.exception}: ${e.message}`;
    for (const sig of matchOutput(text)) this.hit(sig, text, rank, at);
  }

  addGpuSample(g: GpuSample): void {
    const cur = this.s.gpus.get(g.index);
    const used = Number.isFinite(g.memUsedMiB) ? g.memUsedMiB : 0;
    if (cur === undefined)
      this.s.gpus.set(g.index, { name: g.name, peakUsedMiB: used, totalMiB: g.memTotalMiB });
    else cur.peakUsedMiB = Math.max(cur.peakUsedMiB, used);
    // GPU samples say nothing about the trainer's progress, and a live session takes them without
    // a file: they never move the clock a finished run is judged at (live and analyze alike)
  }

  /**
   * A small whole file of the run folder, by its path there, with its whole content so far (again
   * whenever it grows): .HALT, .anomaly_type, exit_code, metrics.json, env.json, mem_*.json. State,
   * not events: what it implies is read from its latest content when the verdict is made.
   */
  setFile(path: string, content: string): void {
    this.s.files.set(path, content);
  }

  addSkipped(n: number): void {
    this.s.skipped += n;
  }

  private addBeat(b: BeatEvent, at: At): void {
    const s = this.s;
    s.ranks.add(b.rank);
    if (b.pid !== undefined) this.workerRanks.beat(b.pid, b.rank);
    if (b.msg === 'boot' && b.pid !== undefined) {
      const prev = this.hbPid.get(b.rank);
      // a new process in an appended-to file: what the old one wrote is not this run
      if (prev !== undefined && prev !== b.pid) {
        s.steps.get(b.rank)?.forgetBeats(BEAT, END_PRIORITY.beat);
        s.progress.get('beat')?.delete(b.rank);
      }
      this.hbPid.set(b.rank, b.pid);
    }
    s.detector.observe(b);
    this.seenAt(b.ts);
    if (b.gpuMemReservedMiB !== undefined)
      s.hbPeakReservedMiB = Math.max(s.hbPeakReservedMiB ?? 0, b.gpuMemReservedMiB);
    if (b.gpuMemAllocMiB !== undefined) s.hbPeakAllocMiB = Math.max(s.hbPeakAllocMiB ?? 0, b.gpuMemAllocMiB);
    if (b.msg === 'beat') {
      this.record(b.rank, b.step).startTs = b.ts;
      this.progressed('beat', b.rank, { announced: b.step });
    } else if (b.msg === 'progress') {
      const r: StepRecord = this.record(b.rank, b.step);
      setEnd(r, b.ts, END_PRIORITY.beat);
      this.progressed('beat', b.rank, { done: b.step });
      if (b.loss !== undefined) {
        setLoss(r, b.loss, BEAT);
        if (!Number.isFinite(b.loss)) s.nanHits.push({ rank: b.rank, step: b.step, at });
      }
      if (b.toksPerS !== undefined) setToks(r, b.toksPerS, BEAT);
    } else if (b.msg === 'watchdog_dump') {
      for (const sig of matchSource('dump', 'watchdog'))
        this.hit(sig, `heartbeat watchdog_dump (rank ${b.rank})`, b.rank, at);
    }
  }

  private record(rank: number, step: number): StepRecord {
    let m = this.s.steps.get(rank);
    if (m === undefined) {
      m = new RankSteps();
      this.s.steps.set(rank, m);
    }
    return m.record(step, windowFor(this.s.steps.size));
  }

  /** a stream says a rank got this far (monotone: the order of streams does not matter) */
  private progressed(source: StepSource, rank: number, p: Partial<StepContext>): void {
    let bySource = this.s.progress.get(source);
    if (bySource === undefined) {
      bySource = new Map();
      this.s.progress.set(source, bySource);
    }
    const cur = bySource.get(rank) ?? { announced: 0, done: 0 };
    bySource.set(rank, {
      announced: Math.max(cur.announced, p.announced ?? 0),
      done: Math.max(cur.done, p.done ?? 0),
    });
  }

  /** what the output has said so far of a rank's step and rank 0's (copied: later lines move on) */
  private outputContext(rank: number): { rank: StepContext | null; rank0: StepContext | null } {
    const out = this.s.progress.get('output');
    const copy = (c: StepContext | undefined) => (c === undefined ? null : { ...c });
    return { rank: copy(out?.get(rank)), rank0: copy(out?.get(0)) };
  }

  private hit(sig: Signature, text: string, rank: number | undefined, at: At): void {
    addHit(this.s.signatures, { sig, rank, text: text.slice(0, 500), at });
  }

  private seenAt(ts: number): void {
    if (Number.isFinite(ts)) this.s.lastEvidenceTs = Math.max(this.s.lastEvidenceTs ?? ts, ts);
  }
}

function pushBounded<T>(list: T[], v: T): void {
  list.push(v);
  if (list.length > MAX_PROBES) list.splice(0, list.length - MAX_PROBES);
}
