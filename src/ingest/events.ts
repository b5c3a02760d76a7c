/**
 * Typed events produced by the pure parsers in `src/ingest/`. Every source (trainer stdout, heartbeat
 * files, stack dumps, nvidia-smi) is turned into these, and everything downstream (stall detector,
 * verdict, live session, `analyze`) consumes only these. Times are epoch seconds (float).
 */
import type { ProbeEvent } from './probe-events.js';
import type { InferredFormat, OutputShapes } from './step-shape-learner.js';

/**
 * Where a step's numbers came from. When two sources give a value for the same step, the higher one
 * wins whatever arrived first: what the trainer printed (what the user reads), then its heartbeat,
 * then its CSV table.
 */
export type StepSource = 'output' | 'beat' | 'table';
export const SOURCE_PRIORITY: Record<StepSource, number> = { output: 3, beat: 2, table: 1 };

/** One training step's metrics, from any supported log format. */
export interface StepEvent {
  kind: 'step';
  rank: number;
  step: number;
  /**
   * absent where the line tells progress but no loss (a tqdm bar without a loss in its postfix,
   * DeepSpeed's `step=N, skipped=…` line): the step is done, its loss is not known
   */
  loss?: number;
  lr?: number;
  toksPerS?: number;
  /**
   * the step's duration as the trainer measured it (nanoGPT's `time Yms`, minGPT's `iter_dt`,
   * Megatron's ms per iteration, a tqdm bar's 1/rate)
   */
  seconds?: number;
  /** "step N of M": the step count the trainer says it runs to, where it prints one (tqdm `45/100`) */
  total?: number;
  /**
   * which grammar matched: nsa-vibe, nanogpt, mingpt, hf, lightning, torchtitan, megatron,
   * deepspeed, litgpt, jsonl, tqdm, preset-regex
   */
  format: string;
  /** when the line arrived (trainer clock, epoch seconds), where nsa-dbg recorded it */
  ts?: number;
}

/** A heartbeat record from `heartbeat_rank{R}.jsonl`. */
export interface BeatEvent {
  kind: 'beat';
  rank: number;
  step: number;
  ts: number;
  pid?: number;
  /** boot | beat | progress | step_end | watchdog_dump | fineweb_* | other */
  msg: string;
  phase?: string;
  gpuMemAllocMiB?: number;
  gpuMemReservedMiB?: number;
  loss?: number;
  toksPerS?: number;
  /** remaining keys, untouched */
  extra: Record<string, unknown>;
}

/** A line the trainer printed that is not a step line: banners, warnings, fatal lines. */
export interface LogLineEvent {
  kind: 'log';
  rank?: number;
  /** boot | train | debug | warn | error | fatal | grad-trace | ddp | trace | other */
  tag: string;
  text: string;
  /** `[debug] step N: input shape` and similar carry the step they announce */
  step?: number;
  /** when the line arrived (trainer clock, epoch seconds), where nsa-dbg recorded it */
  ts?: number;
}

export interface Frame {
  file: string;
  line: number;
  function: string;
  code?: string;
}

/** A Python traceback (or torchrun's root-cause summary) seen in the output. */
export interface TracebackEvent {
  kind: 'traceback';
  rank?: number;
  exception: string;
  message: string;
  frames: Frame[];
  /** no exception line came (the process was killed while Python printed the traceback) */
  cutOff?: true;
  /** torchrun's ChildFailedError summary: the root cause (first observed failure) and all failures */
  torchrun?: {
    rootCauseRank: number | null;
    rootCauseExitCode: number | null;
    failures: Array<{ rank: number; exitCode: number | null }>;
  };
}

/** The pretty-printed final metrics JSON. */
export interface MetricsEvent {
  kind: 'metrics';
  metrics: Record<string, unknown>;
}

export interface DumpThread {
  name: string;
  ident?: string;
  frames: Frame[];
}

/** A stack dump file (nsa-vibe signal / watchdog, faulthandler, py-spy). */
export interface DumpEvent {
  kind: 'dump';
  file: string;
  dumpKind: 'signal' | 'watchdog' | 'faulthandler' | 'py-spy';
  signal?: number;
  ts?: number;
  threads: DumpThread[];
  /** watchdog dumps: the heartbeat time the watchdog compared against */
  lastHeartbeatTs?: number;
  /** watchdog dumps with NSA_TRACE_GRADS: parameters whose gradients never arrived */
  missingGrads?: string[];
  /**
   * nsa-dbg's own faulthandler dumps: whether the main thread ran Python again right after (its
   * Python-level handler answered): true, a wait Python can interrupt or Python code; false, a
   * native call (a collective, a CUDA sync, a long kernel); undefined: not known yet
   */
  inPython?: boolean;
  /**
   * nsa-dbg's own faulthandler dumps: when (box clock) a dump whose `inPython` is still unknown is
   * taken for a main thread outside Python (stack-log.ts: a second after the hook's watcher saw the
   * signal, or after the signal went out where the hook writes no `seen` mark)
   */
  inPythonBy?: number;
}

/**
 * A rank's last words: every thread's stack that nsa-dbg's stack hook wrote into the rank's stack
 * log when a signal that ends a process came (SIGTERM, SIGINT, or a fatal one: SIGSEGV, SIGABRT…).
 * Re-emitted under the same `name` as its text grows; the newest counts.
 */
export interface LastWordsEvent {
  kind: 'last-words';
  /** `<stack log>@last-words-<n>`: the n-th record of that log */
  name: string;
  /** the stack log, by path in the run folder */
  file: string;
  rank: number;
  pid: number;
  /** `SIGTERM`, `SIGSEGV`, …, as the hook or faulthandler named it */
  signal: string;
  /** when the signal came (epoch seconds, the rank's clock); null: faulthandler's fatal dumps say no time */
  at: number | null;
  /** written by faulthandler from C on a fatal signal (no Python ran after it) */
  fatal: boolean;
  /** the hook's own frames and watcher thread left out; the main thread named MainThread */
  threads: DumpThread[];
  /** its end marker was read (a fatal dump has none: complete at the end of the file) */
  complete: boolean;
}

/**
 * A rank's process as nsa-dbg's stack hook registered it (the header of its stack log): where its
 * stacks go and which pid to signal for them.
 */
export interface WorkerEvent {
  kind: 'worker';
  rank: number;
  localRank: number;
  pid: number;
  host: string;
  /** the signal that takes its stacks (SIGUSR2 unless the lane picked another) */
  signal: number;
  /** its stack log, by path in the run folder, and where it is on the rank's own box */
  file: string;
  path: string;
  /** when it registered (epoch seconds, the trainer's clock) */
  ts: number;
  /** its environment named no rank: `rank` is the hook's guess of 0 (its heartbeats may correct it) */
  rankGuessed?: true;
  /**
   * the signal its hook takes straggler samples on (the watcher writes the main thread's frames:
   * cheaper than the stack signal's faulthandler dump); absent: samples use `signal`
   */
  sampleSignal?: number;
}

/** One GPU sample from `nvidia-smi --query-gpu=... --format=csv,noheader,nounits`. */
export interface GpuSample {
  index: number;
  name: string;
  memUsedMiB: number;
  memTotalMiB: number;
  utilPct?: number;
  tempC?: number;
  powerW?: number;
  /** epoch seconds when known */
  ts?: number;
}

export type {
  DumpOutcome,
  DumpRequestEvent,
  GpuProcess,
  OomKillEvent,
  ProbeEvent,
  ProcProbeEvent,
  ProcState,
  TeardownEvent,
  TeardownRank,
} from './probe-events.js';

import type { FlightRecorderEvent } from './flight-recorder.js';

/**
 * What the output parser learned of a trainer it has no parser for: the step-line shape it adopted,
 * or, while no line was recognised as a step, what the lines look like.
 */
export interface OutputFormatEvent {
  kind: 'output-format';
  inferred?: InferredFormat;
  unrecognised?: OutputShapes;
}

export type IngestEvent =
  | StepEvent
  | OutputFormatEvent
  | BeatEvent
  | LogLineEvent
  | TracebackEvent
  | MetricsEvent
  | DumpEvent
  | LastWordsEvent
  | WorkerEvent
  | FlightRecorderEvent
  | ProbeEvent
  | StackSampleEvent;

/**
 * One straggler sample (a stack-hook dump nsa-dbg asked for with the `sample` mark): the evidence
 * classifies it (in a collective wait or not), counts it and lets it go; it is never kept as a dump.
 */
export interface StackSampleEvent {
  kind: 'stack-sample';
  rank: number;
  pid: number;
  /** when it was asked for (trainer clock) */
  ts: number;
  /** the request's id: one for every rank signalled in the same round */
  id: string;
  dump: DumpEvent;
}
