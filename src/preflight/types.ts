/**
 * What `nsa-dbg check` says of a box: one line per check, each with what was measured, what was
 * expected and where that expectation comes from, so a NO-GO can be argued with.
 */

/** `skip`: the source is not there to read (no NVLink, a kernel log the login may not read) */
export type CheckStatus = 'pass' | 'warn' | 'fail' | 'skip';

export interface Check {
  /** stable id for --json readers: `gpus.visible`, `gpu.ecc`, `disk.out_dir`, … */
  id: string;
  /** what is checked, for people */
  name: string;
  /** the GPU's index, for a per-GPU check */
  gpu?: number;
  status: CheckStatus;
  measured: string;
  expected: string;
  /** where the expectation comes from (the lane, a datasheet, nsa-dbg's floor) */
  source: string;
}

/** `{out, err, code}` of one command the probe ran on the box */
export interface CommandOutput {
  out: string;
  err: string;
  code: number;
}

export interface DfOutput extends CommandOutput {
  /** the folder asked about */
  path: string;
  /** the nearest folder of it that exists (an out_dir the trainer has not made yet) */
  at: string;
}

export interface TorchFacts {
  version?: string;
  cuda?: string | null;
  nccl?: string | null;
  available?: boolean;
  deviceCount?: number;
  devices?: string[];
  /** torch missing, or broken while importing or initialising CUDA */
  error?: string;
  simulated?: boolean;
}

export interface RankMeasure {
  rank: number;
  gpu?: number;
  tflops?: number;
  allreduce?: { backend: string; bytes: number; seconds: number; busGBs: number };
  error?: string;
}

export interface Measurements {
  /** ranks that took part (the lane's ranks per node, at most the GPUs torch sees) */
  world: number;
  ranks: RankMeasure[];
  /** `--query-gpu=index,pcie.link.*` read while the matmuls ran */
  pcieLoad?: CommandOutput | null;
  simulated?: boolean;
}

/** The probe's one JSON line (src/preflight/probe.py), raw sources unparsed. */
export interface ProbeOutput {
  host: string;
  python: string;
  pythonVersion: string;
  smiQuery: CommandOutput;
  smiApps: CommandOutput;
  smiNvlink: CommandOutput;
  meminfo: string | null;
  df: DfOutput[];
  ptraceScope: string | null;
  procStatus: string | null;
  pyspy: string | null;
  kernelLog: { source: string; text: string | null; error?: string };
  /** the collective-changing variables of the probe's environment (the lane's env over the box's) */
  env: Record<string, string>;
  torch: TorchFacts;
  measure: Measurements | null;
  elapsedS: number;
}

/** What the lane asks of the box, with where each ask comes from. */
export interface LaneAsk {
  lane: string;
  ranksPerNode: number;
  ranksSource: string;
  /** the stack hook's signal; 0: the lane turned it off */
  stackSignal: number;
  runDir: string;
  outDir: string;
  outDirSource: string;
}
