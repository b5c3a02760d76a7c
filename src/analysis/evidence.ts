/**
 * The evidence of one run: what evidence-intake.ts collected, and `result()`, the verdict at any
 * moment (decided in verdict.ts), with the questions the live views ask of it between verdicts.
 */

import type { DumpEvent, WorkerEvent } from '../ingest/events.js';
import { NodeMap } from '../ingest/node-map.js';
import { compareAt } from '../ingest/order.js';
import { dumpsInOrder } from './evidence-facts.js';
import { EvidenceIntake } from './evidence-intake.js';
import { headlineStall, type SettledStall, settledStall, waitingForCulprit } from './rank-stacks.js';
import { type ManyRanks, manyRanksLive, type RankRow, rankRows } from './rank-table.js';
import type { AnalysisResult, PastStallReport } from './result.js';
import {
  type CurrentSilence,
  currentSilenceOf,
  currentSilences,
  pastStallReports,
  type SilentRank,
  silentRanks,
} from './silences.js';
import { StallDetector, type StallDetectorOptions } from './stall-detector.js';
import { DEFAULT_JUDGE, type JudgeSettings } from './stall-judge.js';
import { StepCadence, type StepFormatReport } from './step-cadence.js';
import { type StragglerRank, stragglersOf } from './straggler.js';
import { decide, type ResultOptions } from './verdict.js';
import { WorkerRanks } from './worker-ranks.js';

export type { AnalysisResult } from './result.js';

/** How the evidence is judged: the lane's detector settings, live and offline alike. */
export interface EvidenceOptions {
  detector?: StallDetectorOptions;
  judge?: Partial<JudgeSettings>;
  /** ranks per node of a multi-node run (where ranks are placed before nodes.jsonl says) */
  nprocPerNode?: number;
}

export class Evidence extends EvidenceIntake {
  constructor(opts: EvidenceOptions = {}) {
    const workerRanks = new WorkerRanks();
    super(
      {
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
        workers: workerRanks.byRank,
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
      },
      workerRanks,
    );
  }

  /** which step lines are read, how often and from which base (cheap: no verdict is made) */
  stepFormat(): StepFormatReport | null {
    return this.s.cadence.report(this.s.inferredFormat ?? undefined);
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

  /** moves whenever workers() changes (a registration, a guessed rank placed by its heartbeats) */
  get workersVersion(): number {
    return this.workerRanks.version;
  }

  /** each rank's process as nsa-dbg's stack hook registered it (its pid, host and stack log) */
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

  result(opts: ResultOptions = {}): AnalysisResult {
    return decide(this.s, opts);
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
