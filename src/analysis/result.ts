/**
 * The verdict object of `nsa-dbg analyze --json` (field names fixed by the issue) and of the live
 * session. Everything beyond the fields is an extra the report and panels may show.
 */
import type { Frame } from '../ingest/events.js';
import type { StallWhere } from '../session/state.js';
import type { Verdict } from './signatures.js';
import type { SlowStep } from './step-stats.js';

export type { Verdict } from './signatures.js';

export interface StallReport {
  rank: number;
  step: number;
  where: StallWhere;
  /** seconds of silence at the end of the evidence, and the threshold it exceeded */
  silenceS?: number;
  thresholdS?: number;
  cpuBusy?: boolean | null;
}

export interface CrashReport {
  rank: number;
  step: number;
  exception: string;
  message: string;
  /** innermost frame in the user's code (not site-packages), else the innermost frame */
  frame: Frame | null;
}

export interface DumpReport {
  file: string;
  kind: 'signal' | 'watchdog' | 'faulthandler' | 'py-spy';
  signal?: number;
  ts?: number;
  mainThreadTop: Frame | null;
  /** the innermost main-thread frame in the user's code (not site-packages/torch): where to look */
  mainThreadUserTop: Frame | null;
}

export interface SignatureHit {
  name: string;
  meaning: string;
  implies: Verdict | null;
  count: number;
  rank?: number;
  /** the first text that matched */
  text: string;
}

export interface AnalysisResult {
  verdict: Verdict;
  stepsReached: number;
  ranks: number[];
  stall: StallReport | null;
  nan: { rank: number; step: number } | null;
  crash: CrashReport | null;
  slowSteps: SlowStep[];
  throughput: { medianToksPerS: number } | null;
  memory: { peakReservedMiB: number; peakAllocMiB?: number } | null;
  dumps: DumpReport[];
  skippedLines: number;
  // extras
  /** one line, e.g. "hang at step 6 (in-step), rank 0" */
  summary: string;
  /** where each rank's evidence stops (the runbook localisation), also for incomplete runs */
  lastPosition: StallReport | null;
  lossExplosion: { rank: number; step: number; loss: number; baseline: number } | null;
  /** stalls that ended when heartbeats resumed (freezes); they make no verdict by themselves */
  pastStalls: Array<StallReport & { declaredTs: number; resumedTs: number }>;
  signatures: SignatureHit[];
  exitCode: number | null;
  /** exit status says the process was killed (SIGKILL 137, timeout 124, ...) */
  killed: boolean;
  /** the end-of-run marker (final metrics) was seen */
  completed: boolean;
  gpus: Array<{ index: number; name: string; peakUsedMiB: number; totalMiB: number }>;
  missingGrads: Array<{ rank: number; step?: number; missing: number }>;
  notes: string[];
}
