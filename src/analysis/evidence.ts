/**
 * The evidence accumulator: events and files go in as they arrive (live) or as a folder is read
 * (offline), and `result()` gives the verdict at any moment. Only facts are collected here; the
 * decision is in verdict.ts. The run-folder reader (src/ingest/run-folder.ts) is the only writer in
 * the product; whatever the interleaving of its files, the facts collected are the same
 * (evidence-state.ts says how).
 */

import type {
  BeatEvent,
  DumpEvent,
  GpuSample,
  IngestEvent,
  StepSource,
  TracebackEvent,
  WorkerEvent,
} from '../ingest/events.js';
import { SOURCE_PRIORITY } from '../ingest/events.js';
import { NodeMap } from '../ingest/node-map.js';
import type { At } from '../ingest/order.js';
import { compareAt } from '../ingest/order.js';
import { slurmCancelOf } from '../ingest/slurm-cancel.js';
import { addHit, dumpsInOrder } from './evidence-facts.js';
import type { EvidenceState, StepContext } from './evidence-state.js';
import type { ProgressRecord } from './progress-tracker.js';
import { headlineStall, type SettledStall, settledStall, waitingForCulprit } from './rank-stacks.js';
import { type ManyRanks, manyRanksLive, type RankRow, rankRows } from './rank-table.js';
import type { AnalysisResult, PastStallReport } from './result.js';
import { matchOutput, matchSource, type Signature } from './signatures.js';
import {
  type CurrentSilence,
  currentSilenceOf,
  currentSilences,
  pastStallReports,
  type SilentRank,
  silentRanks,
} from './silences.js';
import { inCollective, programFrames } from './stack-diff.js';
import { StallDetector, type StallDetectorOptions } from './stall-detector.js';
import { DEFAULT_JUDGE, type JudgeSettings } from './stall-judge.js';
import { StepCadence, type StepFormatReport } from './step-cadence.js';
import { type StepRecord, setEnd, setLoss, setToks } from './step-stats.js';
import { RankSteps, windowFor } from './step-store.js';
import { type StragglerRank, stragglersOf } from './straggler.js';
import { decide, type ResultOptions } from './verdict.js';
import { WorkerRanks } from './worker-ranks.js';

export type { AnalysisResult } from './result.js';

const EXIT_LINE = /^== exit (-?\d+)/;
const MISSING = /missing=(\d+)/;
/** probe records kept (a multi-day run probes only while a rank is silent; this bounds the worst case) */
const MAX_PROBES = 20_000;
const BEAT = SOURCE_PRIORITY.beat;
/** when a step ended: a heartbeat's own time beats an output line's or a CSV row's arrival */
const END_PRIORITY: Record<StepSource, number> = { beat: 3, output: 2, table: 1 };

/** How the evidence is judged: the lane's detector settings, live and offline alike. */
export interface EvidenceOptions {
  detector?: StallDetectorOptions;
  judge?: Partial<JudgeSettings>;
  /** ranks per node of a multi-node run (where ranks are placed before nodes.jsonl says) */
  nprocPerNode?: number;
}

export class Evidence {
  private readonly s: EvidenceState;
  /** pid of the process whose heartbeats we hold, per rank (files are appended across re-runs) */
  private readonly hbPid = new Map<number, number>();
  /** the stack hook's registrations, one pid one rank (s.workers is its placement) */
  private readonly workerRanks = new WorkerRanks();
  /** for callers that feed events without a stream (tests, the bench): one stream in call order */
  private seq = 0;

  constructor(opts: EvidenceOptions = {}) {
    this.s = {
      nodes: new NodeMap(opts.nprocPerNode),
      detector: new StallDetector(opts.detector),
      revision: 0,
      procProbes: [],
      teardowns: [],
      oomKills: [],
      slurmCancel: null,
      dumpRequests: [],
      stackSamples: new Map(),
      sampleRounds: new Map(),
      probing: false,
      judge: { ...DEFAULT_JUDGE, ...definedOnly(opts.judge ?? {}) },
      steps: new Map(),
      ranks: new Set(),
      progress: new Map(),
      nanHits: [],
      tracebacks: [],
      torchrunFailed: [],
      signatures: new Map(),
      dumps: new Map(),
      lastWords: new Map(),
      workers: this.workerRanks.byRank,
      flightRecorder: new Map(),
      outputMetrics: null,
      exitFromLog: null,
      files: new Map(),
      hbPeakReservedMiB: null,
      hbPeakAllocMiB: null,
      gpus: new Map(),
      lastEvidenceTs: null,
      missingGrads: [],
      summarySteps: 0,
      skipped: 0,
      cadence: new StepCadence(),
      inferredFormat: null,
      unrecognised: null,
    };
  }

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
        const r = this.record(e.rank, e.step);
        if (e.loss !== undefined) setLoss(r, e.loss, SOURCE_PRIORITY.output);
        if (e.toksPerS !== undefined) setToks(r, e.toksPerS, SOURCE_PRIORITY.output);
        if (e.seconds !== undefined) r.seconds ??= e.seconds;
        this.progressed('output', e.rank, { done: e.step });
        if (e.ts !== undefined) {
          setEnd(r, e.ts, END_PRIORITY.output);
          this.observe({ rank: e.rank, step: e.step, ts: e.ts, msg: 'step_end' }, 'output');
        }
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
        const waiting = inCollective(programFrames(e.dump));
        c.samples++;
        if (waiting) c.waiting++;
        s.stackSamples.set(rank, c);
        const round = s.sampleRounds.get(e.id) ?? { n: 0, waiting: 0, lone: -1 };
        round.n++;
        if (waiting) round.waiting++;
        else round.lone = round.lone === -1 ? rank : -2;
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

  /** which step lines are read, how often and from which base (cheap: no verdict is made) */
  stepFormat(): StepFormatReport | null {
    return this.s.cadence.report(this.s.inferredFormat ?? undefined);
  }

  /** a row of the trainer's CSV table (training.csv): step, loss and toks/s of rank 0 */
  addTableRow(step: number, loss: number, toksPerS: number, ts?: number): void {
    const r = this.record(0, step);
    setLoss(r, loss, SOURCE_PRIORITY.table);
    if (Number.isFinite(toksPerS)) setToks(r, toksPerS, SOURCE_PRIORITY.table);
    this.progressed('table', 0, { done: step });
    if (ts !== undefined) {
      setEnd(r, ts, END_PRIORITY.table);
      this.observe({ rank: 0, step, ts, msg: 'step_end' }, 'table');
    }
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

  /** where each rank runs (a multi-node run's nodes.jsonl) */
  get nodes(): NodeMap {
    return this.s.nodes;
  }

  /** the one stall detector of this run (live panels and verdicts read the same object) */
  get detector(): StallDetector {
    return this.s.detector;
  }

  /** how silences are judged (the lane's spinConfirmS / maxStepS) */
  get judgeSettings(): JudgeSettings {
    return this.s.judge;
  }

  /** the live session checks silent ranks itself: silence alone is a suspicion from the start */
  expectProbes(): void {
    this.s.probing = true;
  }

  /** silent ranks now, each with what the facts taken during its silence say (stuck or slow) */
  silences(nowS: number): CurrentSilence[] {
    return currentSilences(this.s, nowS);
  }

  /** silent ranks now, not judged (cheap: ask silenceOf for the one a check is due for) */
  silentRanks(nowS: number): SilentRank[] {
    return silentRanks(this.s, nowS);
  }

  /** one rank's silence now, judged as silences() judges it (null: the rank is not silent) */
  silenceOf(rank: number, nowS: number): CurrentSilence | null {
    return currentSilenceOf(this.s, rank, nowS);
  }

  /** silences that ended when the rank's records resumed; a recovered hang says what was found */
  pastStalls(): PastStallReport[] {
    return pastStallReports(this.s);
  }

  /** the silence a hang is told by now (the culprit's on many ranks), or null */
  headlineStall(nowS: number): CurrentSilence | null {
    return headlineStall(this.s, currentSilences(this.s, nowS))?.stall ?? null;
  }

  /** a hang of many ranks whose verdict is settled now (rank-stacks.ts), or null */
  settledStall(nowS: number): SettledStall | null {
    return settledStall(this.s, currentSilences(this.s, nowS));
  }

  /** the silent ranks whose stacks (or unanswered requests) say they wait for the culprit now */
  waitingForCulprit(nowS: number): number[] {
    return waitingForCulprit(this.s, currentSilences(this.s, nowS));
  }

  /** the per-rank table, root cause and stack diff of a many-rank run now (rank-table.ts) */
  manyRanks(nowS: number, steps: Array<{ rank: number; step: number }>): ManyRanks {
    return manyRanksLive(this.s, steps, currentSilences(this.s, nowS));
  }

  /** every straggler-sampled rank scored, the straggler named when one stands out (straggler.ts) */
  stragglers(): StragglerRank[] {
    return stragglersOf(this.s);
  }

  /** the per-rank rows alone (after the end, the verdict supplies root cause and diff) */
  rankRows(steps: Array<{ rank: number; step: number }>): RankRow[] {
    return rankRows(this.s, steps);
  }

  /** the first worker torchrun reported failed (`failed (exitcode: N) local_rank: R`), if any */
  firstWorkerFailure(): { rank: number; exitCode: number } | null {
    const f = [...this.s.torchrunFailed].sort((a, b) => compareAt(a.at, b.at))[0];
    return f ? { rank: f.rank, exitCode: f.exitCode } : null;
  }

  /** each rank's process as nsa-dbg's stack hook registered it (its pid, host and stack log) */
  /** moves whenever workers() changes (a registration, a guessed rank placed by its heartbeats) */
  get workersVersion(): number {
    return this.workerRanks.version;
  }

  workers(): ReadonlyMap<number, WorkerEvent> {
    return this.s.workers;
  }

  /** a dump read so far, by its name */
  dump(name: string): DumpEvent | undefined {
    return this.s.dumps.get(name);
  }

  /** the dumps read so far, by path */
  dumpEvents(): DumpEvent[] {
    return dumpsInOrder(this.s);
  }

  addSkipped(n: number): void {
    this.s.skipped += n;
  }

  result(opts: ResultOptions = {}): AnalysisResult {
    return decide(this.s, opts);
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
    const copy = (r: number) => {
      const c = out?.get(r);
      return c === undefined ? null : { ...c };
    };
    return { rank: copy(rank), rank0: copy(0) };
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

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
