/**
 * What the evidence of one run holds, read by the verdict and the views. A leaf: types and small pure
 * helpers only, so the files that read the state import no file that writes it.
 *
 * Order independence: a run folder's files arrive interleaved in any way (live: as each is written;
 * offline: one after the other), so nothing here may depend on which file was read first. Each fact
 * from a stream carries where it came from (`At`: the stream and its place in it); facts that need
 * another stream's state (the step a traceback was printed in) keep their own stream's context and
 * are resolved when the verdict is made; whole files are state (the latest content), never events.
 */
import type {
  DumpEvent,
  DumpRequestEvent,
  LastWordsEvent,
  OomKillEvent,
  ProcProbeEvent,
  StepSource,
  TeardownEvent,
  TracebackEvent,
  WorkerEvent,
} from '../ingest/events.js';
import type { FlightRecorderEvent } from '../ingest/flight-recorder.js';
import type { NodeMap } from '../ingest/node-map.js';
import type { At } from '../ingest/order.js';
import type { InferredFormat, OutputShapes } from '../ingest/step-shape-learner.js';
import type { Signature } from './signatures.js';
import type { StallDetector } from './stall-detector.js';
import type { JudgeSettings } from './stall-judge.js';
import type { StepCadence } from './step-cadence.js';
import type { RankSteps } from './step-store.js';

/** What one stream had said about a rank's step by some point: the last announced and completed step. */
export interface StepContext {
  announced: number;
  done: number;
}

export interface OrderedTraceback {
  ev: TracebackEvent;
  at: At;
  /** what the output had said of the rank's step (and rank 0's) when the traceback was printed */
  ctx: { rank: StepContext | null; rank0: StepContext | null };
  /** resolved by the verdict: the step the rank was in when it was printed */
  step?: number;
}

export interface SignatureState {
  sig: Signature;
  count: number;
  rank?: number;
  text: string;
  at: At;
}

export interface NanHit {
  rank: number;
  /** null: a FATAL line, before the step is logged; resolved from `ctx` by the verdict */
  step: number | null;
  at: At;
  ctx?: { rank: StepContext | null; rank0: StepContext | null };
}

/** Everything collected so far; read by verdict.ts. */
export interface EvidenceState {
  detector: StallDetector;
  /** per rank, bounded: the newest steps exactly, older ones folded into what verdicts need */
  steps: Map<number, RankSteps>;
  /** ranks seen in the output and heartbeats; ranksOf() adds the stack hook's processes */
  ranks: Set<number>;
  /** per source and rank: how far each stream says the rank got (for the step a fact belongs to) */
  progress: Map<StepSource, Map<number, StepContext>>;
  nanHits: NanHit[];
  tracebacks: OrderedTraceback[];
  torchrunFailed: Array<{ rank: number; exitCode: number; at: At }>;
  /** signatures matched in streams (output lines, heartbeat records); files and dumps add theirs at the end */
  signatures: Map<string, SignatureState>;
  /** by path in the run folder: a dump re-read as it grows replaces its earlier parse */
  dumps: Map<string, DumpEvent>;
  /** ranks' last words (stacks written as a signal ended them), by record name */
  lastWords: Map<string, LastWordsEvent>;
  /** each rank's newest process as nsa-dbg's stack hook registered it */
  workers: Map<number, WorkerEvent>;
  /** PyTorch's Flight Recorder dumps, by path */
  flightRecorder: Map<string, FlightRecorderEvent>;
  /** counts the events added: what is derived from the state (rank-index.ts) is rebuilt when it moves */
  revision: number;
  procProbes: ProcProbeEvent[];
  /** nsa-dbg's snapshots of the ranks at the first sign of teardown (one per run, in order read) */
  teardowns: TeardownEvent[];
  /** Slurm's word that it ended the job ("Slurm cancelled the job"), from its line in the output */
  slurmCancel: string | null;
  /** ranks the kernel log says the OOM killer ended */
  oomKills: OomKillEvent[];
  dumpRequests: DumpRequestEvent[];
  /**
   * straggler samples per rank: how many were taken and how many found the rank in a collective
   * wait. Counts only: each sample is classified as it is read and let go (straggler.ts ranks them)
   */
  stackSamples: Map<number, { samples: number; waiting: number }>;
  /**
   * the same samples by round (one request id: every rank signalled at one moment), a few numbers
   * each whatever the ranks: how many were sampled, how many waited, and the one rank not waiting
   * (-1 none yet, -2 more than one). Read in any order, the same tally (straggler.ts's lone test)
   */
  sampleRounds: Map<string, { n: number; waiting: number; lone: number }>;
  /** which node each rank runs on (multi-node runs: nodes.jsonl) */
  nodes: NodeMap;
  /**
   * nsa-dbg checks silent ranks on the box (live, or a folder with its probe file): silence alone is
   * then only a suspicion. Without it (someone else's capture) silence past the threshold is a hang.
   */
  probing: boolean;
  judge: JudgeSettings;
  /** the final metrics printed on stdout (the pretty-printed JSON, an HF summary) */
  outputMetrics: Record<string, unknown> | null;
  exitFromLog: number | null;
  /** small whole files by path in the run folder, their latest content */
  files: Map<string, string>;
  hbPeakReservedMiB: number | null;
  hbPeakAllocMiB: number | null;
  gpus: Map<number, { name: string; peakUsedMiB: number; totalMiB: number }>;
  lastEvidenceTs: number | null;
  /** the step count of a closing summary (`"steps": N` in the final metrics) */
  summarySteps: number;
  /** from grad-trace lines on stdout (dumps add theirs at the end) */
  missingGrads: Array<{ rank: number; step?: number; missing: number }>;
  skipped: number;
  /** how the step lines come: format, logging interval, counter base, target */
  cadence: StepCadence;
  /** the step-line shape learned from the output of a trainer no format knows */
  inferredFormat: InferredFormat | null;
  /** while no line was recognised as a step: what the lines look like (the latest word of the parser) */
  unrecognised: OutputShapes | null;
}

/**
 * Every rank of the run: those the output and heartbeats name, and each stack hook process's rank
 * as placed (one pid, one rank: a process's guessed rank is not a rank of its own)
 */
export function ranksOf(s: Pick<EvidenceState, 'ranks' | 'workers'>): number[] {
  return [...new Set([...s.ranks, ...s.workers.keys()])].sort((a, b) => a - b);
}

/** the base name of a path in the run folder */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
