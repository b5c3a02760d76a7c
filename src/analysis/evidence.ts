/**
 * The evidence accumulator: events and files go in as they arrive (live) or as a folder is read
 * (offline), and `result()` gives the verdict at any moment. Only facts are collected here; the
 * decision is in verdict.ts.
 */

import type {
  BeatEvent,
  DumpEvent,
  DumpRequestEvent,
  GpuSample,
  IngestEvent,
  ProcProbeEvent,
  TracebackEvent,
} from '../ingest/events.js';
import { NodeMap } from '../slurm/node-map.js';
import { type ManyRanks, manyRanksLive, type RankRow, rankRows } from './rank-table.js';
import type { AnalysisResult } from './result.js';
import { matchOutput, matchSource, type Signature } from './signatures.js';
import { type CurrentSilence, currentSilences } from './silences.js';
import { StallDetector, type StallDetectorOptions } from './stall-detector.js';
import { DEFAULT_JUDGE, type JudgeSettings } from './stall-judge.js';
import type { StepRecord } from './step-stats.js';
import { RankSteps } from './step-store.js';
import { decide, type ResultOptions } from './verdict.js';

export type { AnalysisResult } from './result.js';
export type { ResultOptions } from './verdict.js';

const EXIT_LINE = /^== exit (-?\d+)/;
const TRAINING_CSV_ROW = /^(\d+),([^,]+),([^,]+),([^,]+)$/;
const MISSING = /missing=(\d+)/;
/** probe records kept (a multi-day run probes only while a rank is silent; this bounds the worst case) */
const MAX_PROBES = 20_000;

/** How the evidence is judged: the lane's detector settings, live and offline alike. */
export interface EvidenceOptions {
  detector?: StallDetectorOptions;
  judge?: Partial<JudgeSettings>;
  /** ranks per node of a multi-node run (where ranks are placed before nodes.jsonl says) */
  nprocPerNode?: number;
}

export interface OrderedTraceback {
  ev: TracebackEvent;
  order: number;
  /** the step the rank was in when it was printed */
  step: number;
}

export interface SignatureState {
  sig: Signature;
  count: number;
  rank?: number;
  text: string;
  order: number;
}

/** Everything collected so far; read by verdict.ts. */
export interface EvidenceState {
  detector: StallDetector;
  /** per rank, bounded: the newest steps exactly, older ones folded into what verdicts need */
  steps: Map<number, RankSteps>;
  ranks: Set<number>;
  /** per rank: the last step announced on stdout (`[debug] step N`) or by a step_start beat */
  announced: Map<number, number>;
  nanHits: Array<{ rank: number; step: number | null; order: number }>;
  tracebacks: OrderedTraceback[];
  torchrunFailed: Array<{ rank: number; exitCode: number; order: number }>;
  signatures: Map<string, SignatureState>;
  /** by file name: a dump re-read as it grows replaces its earlier parse */
  dumps: Map<string, DumpEvent>;
  procProbes: ProcProbeEvent[];
  dumpRequests: DumpRequestEvent[];
  /** which node each rank runs on (multi-node runs: nodes.jsonl) */
  nodes: NodeMap;
  /**
   * nsa-dbg checks silent ranks on the box (live, or a folder with its probe file): silence alone is
   * then only a suspicion. Without it (someone else's capture) silence past the threshold is a hang.
   */
  probing: boolean;
  judge: JudgeSettings;
  metricsSeen: boolean;
  metrics: Record<string, unknown> | null;
  exitFromLog: number | null;
  files: Map<string, string>;
  hbPeakReservedMiB: number | null;
  hbPeakAllocMiB: number | null;
  memJsonPeakReservedBytes: Map<string, number>;
  memJsonPeakAllocBytes: Map<string, number>;
  gpus: Map<number, { name: string; peakUsedMiB: number; totalMiB: number }>;
  lastEvidenceTs: number | null;
  missingGrads: Array<{ rank: number; step?: number; missing: number }>;
  skipped: number;
  order: number;
}

export class Evidence {
  private readonly s: EvidenceState;
  /** pid of the process whose heartbeats we hold, per rank (files are appended across re-runs) */
  private readonly hbPid = new Map<number, number>();

  constructor(opts: EvidenceOptions = {}) {
    this.s = {
      nodes: new NodeMap(opts.nprocPerNode),
      detector: new StallDetector(opts.detector),
      procProbes: [],
      dumpRequests: [],
      probing: false,
      judge: { ...DEFAULT_JUDGE, ...definedOnly(opts.judge ?? {}) },
      steps: new Map(),
      ranks: new Set(),
      announced: new Map(),
      nanHits: [],
      tracebacks: [],
      torchrunFailed: [],
      signatures: new Map(),
      dumps: new Map(),
      metricsSeen: false,
      metrics: null,
      exitFromLog: null,
      files: new Map(),
      hbPeakReservedMiB: null,
      hbPeakAllocMiB: null,
      memJsonPeakReservedBytes: new Map(),
      memJsonPeakAllocBytes: new Map(),
      gpus: new Map(),
      lastEvidenceTs: null,
      missingGrads: [],
      skipped: 0,
      order: 0,
    };
  }

  addEvent(e: IngestEvent): void {
    const s = this.s;
    s.order++;
    switch (e.kind) {
      case 'beat':
        this.addBeat(e);
        return;
      case 'step': {
        s.ranks.add(e.rank);
        const r = this.record(e.rank, e.step);
        r.loss ??= e.loss;
        if (e.toksPerS !== undefined) r.toksPerS ??= e.toksPerS;
        if (!Number.isFinite(e.loss)) s.nanHits.push({ rank: e.rank, step: e.step, order: s.order });
        return;
      }
      case 'log': {
        const rank = e.rank ?? 0;
        if (e.rank !== undefined) s.ranks.add(e.rank);
        if (e.step !== undefined && e.tag === 'debug')
          s.announced.set(rank, Math.max(s.announced.get(rank) ?? 0, e.step));
        if (e.tag === 'capture') {
          const m = EXIT_LINE.exec(e.text);
          if (m !== null) s.exitFromLog = Number(m[1]);
        } else if (e.tag === 'torchrun' && e.rank !== undefined) {
          const code = /exitcode: (-?\d+)/.exec(e.text);
          s.torchrunFailed.push({ rank: e.rank, exitCode: code ? Number(code[1]) : 1, order: s.order });
        } else if (e.tag === 'grad-trace') {
          const m = MISSING.exec(e.text);
          if (m !== null && Number(m[1]) > 0)
            s.missingGrads.push({ rank, step: e.step, missing: Number(m[1]) });
        }
        for (const sig of matchOutput(e.text)) {
          this.hit(sig, e.text, e.rank);
          // the FATAL line comes before the step is logged: the step it is about is the current one
          if (sig.implies === 'nan') s.nanHits.push({ rank, step: this.currentStep(rank), order: s.order });
        }
        return;
      }
      case 'traceback': {
        const rank = e.rank ?? e.torchrun?.rootCauseRank ?? undefined;
        if (rank !== undefined) s.ranks.add(rank);
        s.tracebacks.push({ ev: e, order: s.order, step: this.currentStep(rank ?? 0) });
        for (const sig of matchOutput(`${e.exception}: ${e.message}`))
          this.hit(sig, `${e.exception}: ${e.message}`, rank);
        return;
      }
      case 'metrics':
        s.metricsSeen = true;
        s.metrics = e.metrics;
        return;
      case 'proc':
      case 'dump-request':
        s.probing = true;
        if (e.kind === 'proc') pushBounded(s.procProbes, e);
        else pushBounded(s.dumpRequests, e);
        this.seenAt(e.ts);
        return;
      case 'dump': {
        const seen = s.dumps.has(e.file);
        s.dumps.set(e.file, e);
        if (e.ts !== undefined) this.seenAt(e.ts);
        if (seen) return; // the same file re-read as it grew
        for (const sig of matchSource('dump', e.dumpKind)) this.hit(sig, e.file, undefined);
        if (e.missingGrads !== undefined && e.missingGrads.length > 0) {
          s.missingGrads.push({ rank: 0, missing: e.missingGrads.length });
        }
        return;
      }
    }
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
   * A small whole file from the run folder (called again with the full content whenever it grows):
   * .HALT, .anomaly_type, exit_code, metrics.json, env.json, training.csv, mem_*.json.
   */
  noteFile(name: string, content: string): void {
    const base = name.split('/').pop() ?? name;
    const s = this.s;
    const unchanged = s.files.get(base) === content;
    s.files.set(base, content);
    if (unchanged) return; // live callers re-send a file whenever it is polled
    if (base === '.anomaly_type' || base === '.HALT') {
      for (const sig of matchSource(base === '.HALT' ? 'halt' : 'anomaly', content))
        this.hit(sig, content.trim(), 0);
    } else if (base === 'metrics.json' || base === 'metrics_fsdp.json') {
      const m = tryJson(content);
      if (m !== null) {
        s.metricsSeen = true;
        s.metrics = m;
      }
    } else if (/^training(?:_fsdp)?\.csv$/.test(base)) {
      for (const line of content.split('\n')) {
        const m = TRAINING_CSV_ROW.exec(line.trim());
        if (m === null) continue;
        const r = this.record(0, Number(m[1]));
        r.loss ??= Number(m[2]);
        r.toksPerS ??= Number(m[4]);
      }
    } else if (/^mem_.*\.json$/.test(base)) {
      const m = tryJson(content);
      if (m === null) return;
      const peak = m['reserved_bytes.all.peak'];
      const alloc = m['allocated_bytes.all.peak'];
      if (typeof peak === 'number') s.memJsonPeakReservedBytes.set(base, peak);
      if (typeof alloc === 'number') s.memJsonPeakAllocBytes.set(base, alloc);
      const ooms = m.num_ooms;
      if (typeof ooms === 'number' && ooms > 0) {
        const sig = matchOutput('CUDA out of memory')[0];
        if (sig !== undefined) this.hit(sig, `${base}: num_ooms=${ooms}`, 0);
      }
    }
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

  /** the per-rank table, root cause and stack diff of a many-rank run now (rank-table.ts) */
  manyRanks(nowS: number, steps: Array<{ rank: number; step: number }>): ManyRanks {
    return manyRanksLive(this.s, steps, currentSilences(this.s, nowS));
  }

  /** the per-rank rows alone (after the end, the verdict supplies root cause and diff) */
  rankRows(steps: Array<{ rank: number; step: number }>): RankRow[] {
    return rankRows(this.s, steps);
  }

  /** dumps seen so far, in arrival order */
  /** the first worker torchrun reported failed (`failed (exitcode: N) local_rank: R`), if any */
  firstWorkerFailure(): { rank: number; exitCode: number } | null {
    const f = this.s.torchrunFailed[0];
    return f ? { rank: f.rank, exitCode: f.exitCode } : null;
  }

  dumpEvents(): DumpEvent[] {
    return [...this.s.dumps.values()];
  }

  addSkipped(n: number): void {
    this.s.skipped += n;
  }

  result(opts: ResultOptions = {}): AnalysisResult {
    return decide(this.s, opts);
  }

  private addBeat(b: BeatEvent): void {
    const s = this.s;
    s.ranks.add(b.rank);
    if (b.msg === 'boot' && b.pid !== undefined) {
      const prev = this.hbPid.get(b.rank);
      // a new process in an appended-to file: what the old one wrote is not this run
      if (prev !== undefined && prev !== b.pid) s.steps.delete(b.rank);
      this.hbPid.set(b.rank, b.pid);
    }
    s.detector.observe(b);
    this.seenAt(b.ts);
    if (b.gpuMemReservedMiB !== undefined)
      s.hbPeakReservedMiB = Math.max(s.hbPeakReservedMiB ?? 0, b.gpuMemReservedMiB);
    if (b.gpuMemAllocMiB !== undefined) s.hbPeakAllocMiB = Math.max(s.hbPeakAllocMiB ?? 0, b.gpuMemAllocMiB);
    if (b.msg === 'beat') {
      this.record(b.rank, b.step).startTs = b.ts;
      s.announced.set(b.rank, Math.max(s.announced.get(b.rank) ?? 0, b.step));
    } else if (b.msg === 'progress') {
      const r = this.record(b.rank, b.step);
      r.endTs = b.ts;
      if (b.loss !== undefined) {
        r.loss ??= b.loss;
        if (!Number.isFinite(b.loss)) s.nanHits.push({ rank: b.rank, step: b.step, order: s.order });
      }
      if (b.toksPerS !== undefined) r.toksPerS ??= b.toksPerS;
    } else if (b.msg === 'watchdog_dump') {
      for (const sig of matchSource('dump', 'watchdog'))
        this.hit(sig, `heartbeat watchdog_dump (rank ${b.rank})`, b.rank);
    }
  }

  private record(rank: number, step: number): StepRecord {
    let m = this.s.steps.get(rank);
    if (m === undefined) {
      m = new RankSteps();
      this.s.steps.set(rank, m);
    }
    return m.record(step);
  }

  /** The step a rank is in: the last announced one, or the one after the last completed. */
  private currentStep(rank: number): number {
    const s = this.s;
    const done = (r: number) => s.steps.get(r)?.done() ?? 0;
    if (s.announced.has(rank) || s.steps.has(rank))
      return Math.max(s.announced.get(rank) ?? 0, done(rank) + 1);
    // ranks other than 0 print no step lines: use what rank 0 says
    return Math.max(s.announced.get(0) ?? 0, done(0) + 1);
  }

  private hit(sig: Signature, text: string, rank: number | undefined): void {
    const cur = this.s.signatures.get(sig.name);
    if (cur !== undefined) cur.count++;
    else
      this.s.signatures.set(sig.name, { sig, count: 1, rank, text: text.slice(0, 500), order: this.s.order });
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

function tryJson(text: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
