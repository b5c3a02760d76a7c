/**
 * The verdict object of `nsa-dbg analyze --json` (field names fixed by the issue) and of the live
 * session. Everything beyond the fields is an extra the report and panels may show.
 */

import type { DumpRequestEvent, Frame, OomKillEvent } from '../ingest/events.js';
import type { MissedCollective } from '../ingest/flight-recorder.js';
import type { LastWordsReport } from './last-words.js';
import type { RootCause } from './root-cause.js';
import type { RunDigest } from './run-digest.js';
import type { Signature, Verdict } from './signatures.js';
import type { HotFrame } from './silences.js';
import type { StackDiff } from './stack-diff.js';
import type { StallCulprit } from './stall-culprit.js';
import type { StallWhere } from './stall-detector.js';
import type { StallEvidence } from './stall-judge.js';
import type { StepFormatReport } from './step-cadence.js';
import type { SlowStep } from './step-stats.js';
import type { StragglerRank } from './straggler.js';
import type { TeardownReport } from './teardown.js';

export interface StallReport {
  rank: number;
  step: number;
  where: StallWhere;
  /** seconds of silence at the end of the evidence, and the threshold it exceeded */
  silenceS?: number;
  thresholdS?: number;
  cpuBusy?: boolean | null;
  /** on a hang that nsa-dbg confirmed on the box: how (absent when silence alone decided) */
  state?: 'stuck' | 'blocked-native';
  evidence?: StallEvidence;
  /** one line: why this is a hang */
  why?: string;
  /** where the main thread sat, from the samples */
  frame?: Frame | null;
  /** on many ranks: why this rank is the one the others wait for (stall-culprit.ts) */
  rootCause?: StallCulprit;
  /** a multi-node run: the node the rank runs on */
  node?: string;
  /**
   * steps logged every k with nothing else saying where the rank was: `step` is the one after the
   * last step logged, which nobody saw; this is the last one logged ("after step 30")
   */
  afterStep?: number;
}

/** a stall that ended when the rank's records resumed (epoch seconds: declared, resumed) */
export type PastStallReport = StallReport & { declaredTs: number; resumedTs: number };

/** A silence that was checked on the box and found busy, not stuck. */
export interface SuspectReport {
  rank: number;
  step: number;
  where: StallWhere;
  state: 'busy';
  silenceS: number;
  why: string;
  evidence: StallEvidence;
}

/** a stack request, its time (epoch seconds) as `at` */
export type DumpRequestReport = Omit<DumpRequestEvent, 'kind' | 'ts'> & { at: number };

export interface CrashReport {
  rank: number;
  /** a multi-node run: the node the rank ran on */
  node?: string;
  step: number;
  /** as StallReport.afterStep: the last step logged before the crash, when steps are logged every k */
  afterStep?: number;
  exception: string;
  message: string;
  /** innermost frame in the user's code (not site-packages), else the innermost frame */
  frame: Frame | null;
  /**
   * how the rank was found (root-cause.ts): `first-exception` (the earliest worker exception that
   * is not a consequence of another rank's exit), `consequence-only`, `died-silently` (the failed
   * rank without a traceback), `single` (one process), `signature`, `launcher` (torchrun's summary
   * alone), `launcher-error` (torchrun itself failed before training: its options, its rendezvous)
   */
  basis?: RootCause['basis'] | 'signature' | 'launcher' | 'launcher-error';
  /** every rank that raised the same exception, when more than one did */
  ranks?: number[];
  /** the other ranks' failures that followed (collective / transport errors) */
  consequences?: RootCause['consequences'];
  /** the rank torchrun's summary named "Root Cause (first observed failure)": evidence only */
  torchrunRootCause?: number;
}

export interface DumpReport {
  file: string;
  kind: 'signal' | 'watchdog' | 'faulthandler' | 'py-spy';
  signal?: number;
  ts?: number;
  mainThreadTop: Frame | null;
  /** the innermost main-thread frame in the user's code (not site-packages/torch): where to look */
  mainThreadUserTop: Frame | null;
  /** the rank that wrote it, when known (from the request that produced it, or a single-rank run) */
  rank?: number;
}

export interface SignatureHit extends Pick<Signature, 'name' | 'meaning' | 'implies'> {
  count: number;
  rank?: number;
  /** the first text that matched */
  text: string;
}

export interface Throughput {
  medianToksPerS?: number;
  medianStepS?: number;
  p95StepS?: number;
}

export interface AnalysisResult {
  verdict: Verdict;
  stepsReached: number;
  ranks: number[];
  stall: StallReport | null;
  nan: { rank: number; step: number } | null;
  crash: CrashReport | null;
  slowSteps: SlowStep[];
  /**
   * the run's rates, each where it is known: toks/s as the trainer printed it; the step time as the
   * trainer printed it (nanoGPT `time`, minGPT `iter_dt`, Megatron's ms per iteration, tqdm's it/s),
   * else from the step lines' arrival times over the logging interval
   */
  throughput: Throughput | null;
  /** which step-line format was read, how often it logs and from which base */
  stepFormat: StepFormatReport | null;
  memory: { peakReservedMiB: number; peakAllocMiB?: number } | null;
  dumps: DumpReport[];
  /** each rank's last words: where it was when a signal ended it (SIGTERM, SIGSEGV, …) */
  lastWords: LastWordsReport[];
  /** nsa-dbg's snapshot of the ranks at the first sign of teardown (absent: none was taken) */
  teardown?: TeardownReport;
  /** ranks the kernel log says the OOM killer ended (absent: none) */
  oomKills?: OomKillEvent[];
  skippedLines: number;
  // extras
  /** one line, e.g. "hang at step 6 (in-step), rank 0" */
  summary: string;
  /** where each rank's evidence stops (the runbook localisation), also for incomplete runs */
  lastPosition: StallReport | null;
  lossExplosion: { rank: number; step: number; loss: number; baseline: number } | null;
  /**
   * stalls that ended when heartbeats resumed (freezes); they make no verdict by themselves. One
   * the checks had confirmed as a hang carries `state`, `why` and `evidence` (a recovered hang).
   */
  pastStalls: PastStallReport[];
  signatures: SignatureHit[];
  exitCode: number | null;
  /** exit status says the process was killed (SIGKILL 137, timeout 124, ...) */
  killed: boolean;
  /** the end-of-run marker (final metrics) was seen, or the exit status was 0 */
  completed: boolean;
  /** the trainer's own closing summary (final metrics JSON, an HF `train_runtime` dict) was seen */
  closingSummary: boolean;
  gpus: Array<{ index: number; name: string; peakUsedMiB: number; totalMiB: number }>;
  missingGrads: Array<{ rank: number; step?: number; missing: number }>;
  notes: string[];
  /** silences checked on the box and found busy: slow, not hung */
  suspects: SuspectReport[];
  dumpRequests: DumpRequestReport[];
  /** every dump's innermost user frame, counted */
  hotFrames: HotFrame[];
  /** ranks grouped by identical main-thread stacks (newest dump of each; during a hang, taken in it) */
  stackDiff: StackDiff | null;
  /**
   * every rank nsa-dbg took straggler samples of, scored (straggler.ts); `named` on the straggler,
   * when one stands out with confidence. Empty when no rank was sampled.
   */
  stragglers: StragglerRank[];
  /**
   * what a person reads of the run besides the verdict (series, excerpts, platform): set by whoever
   * read the folder (the live session, `analyze`), from the same reader
   */
  digest?: RunDigest;
  /**
   * PyTorch's Flight Recorder, when it dumped (a collective timed out): per process group, the
   * ranks that never entered the newest collective the others wait in
   */
  flightRecorder?: MissedCollective[];
  /** the detector settings the verdict was judged with (the lane's) */
  detector: { k: number; floorS: number; firstStepS: number; spinConfirmS: number; maxStepS: number };
}
