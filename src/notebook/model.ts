/**
 * The notebook: one versioned JSON file holding cells, each cell one run (its run dir, the lane as
 * it was when the run started, the resolved env and command, and what the evidence said). Plain
 * data only, so the file, the reducer, the report and the panels all read the same shape.
 */

import type { RunDigest, RunExcerpts } from '../analysis/run-digest.js';
import type { Check } from '../preflight/types.js';
import type { BisectionRecord, CellBisect } from './bisection-record.js';
import type { RunProof } from './run-proof.js';

/** bump when the file shape changes; add a step to migrate.ts for the old one */
export const NOTEBOOK_VERSION = 2;

/** how a cell came from another one */
export type CellLink = 'rerun' | 'toggle' | 'phase' | 'bisect';

export interface LaneSnapshot {
  name: string;
  description: string;
  /** the lane file, and a hash of its bytes when the cell started (stale marking) */
  source: string;
  sourceHash: string;
  env: Record<string, string>;
  args: string[];
  steps?: number;
  acceptance: { steps?: number; finiteLoss: boolean; noStall: boolean; vramLimitMiB?: number };
  /** what the lane expects of a run's performance (the report flags a run below it) */
  target?: { toksPerS?: number };
  phases?: Array<{ steps: number }>;
}

export interface CellSummary {
  stepsReached: number;
  firstLoss: number | null;
  lastLoss: number | null;
  minLoss: number | null;
  medianToksPerS: number | null;
  /** the median step time (s): the trainer's own printed time, else arrivals over the interval */
  medianStepS?: number | null;
  /** which step lines were read: "mingpt, every 10 from 0", a learned shape */
  stepFormat?: string;
  /** the run reached its step target (a trainer logging every k steps never prints the last) */
  targetReached?: boolean;
  peakMemMiB: number | null;
  stall: { step: number; rank: number; where: string; silenceS?: number; thresholdS?: number } | null;
  nan: { step: number; rank: number } | null;
  crash: { step: number; rank: number; exception: string; message: string; where?: string } | null;
  /** the analysis one-liner ("hang at step 6 (in-step), rank 0") */
  line: string;
  exitCode: number | null;
}

/**
 * A box check (`nsa-dbg check` in the notebook): each box's checks as the probe judged them, each
 * with its measured value, expected value and source. The cell's `go`, `verdict` ('GO' / 'NO-GO')
 * and `reasons` (the fail and warn lines) say the whole.
 */
export interface CellCheck {
  /** the whole check, connecting included */
  elapsedS: number;
  boxes: Array<{ host: string; go: boolean; probeS: number; checks: Check[] }>;
}

/** [step, value] pairs, at most DIGEST_POINTS (src/analysis/run-digest.ts) of them */
export type Series = Array<[number, number]>;

export interface Cell {
  id: string;
  /**
   * 'check': a box check, not a run (`check` holds it; it has no run dir, evidence or series).
   * Absent: a run. Added within v2: files without it load as they are.
   */
  kind?: 'check';
  check?: CellCheck;
  /** the cell this one was made from, and how */
  parent?: string;
  link?: CellLink;
  /** phase index of a smoke-ladder lane (0-based) */
  phase?: number;
  /** a bisection's trial (src/bisect) */
  bisect?: CellBisect;
  created: string;
  started?: string;
  ended?: string;
  /** "local" or user@host */
  target: string;
  lane: LaneSnapshot;
  /** the fully resolved env and argv, secrets masked */
  env: Record<string, string>;
  command: string[];
  cwd: string;
  demo: boolean;
  runId: string;
  /** the run dir on the target */
  runDir: string;
  /** where the evidence is on this machine: relative to the notebook's folder when inside it */
  evidenceDir: string;
  git?: { sha: string; dirty: boolean };
  state: 'running' | 'done' | 'failed';
  /**
   * its nsa-dbg ended while it ran and the trainer went with it: finished from its evidence when
   * the notebook was opened again (src/notebook/recover.ts)
   */
  interrupted?: boolean;
  verdict?: string;
  go?: boolean;
  reasons?: string[];
  summary?: CellSummary;
  /** evidence files, relative to evidenceDir */
  evidence: string[];
  /** stepMs: the step time in ms, for the A/B interval (cells of older versions have none) */
  series: { loss: Series; toks: Series; stepMs?: Series };
  /** the analysis result as `analyze --json` gave it; fields this version does not know pass through */
  analysis?: Record<string, unknown>;
  /** evidence lines for the report, taken when the run ended (secret values masked) */
  excerpts?: RunExcerpts;
  /** the env and options each rank's process started with, against what the run was meant to have */
  proof?: RunProof;
  /** platform facts from env.json and nvidia-smi, for the report */
  platform?: RunDigest['platform'] & { gpuMemMiB?: number; gpuCount?: number };
}

export interface Notebook {
  version: number;
  /** the report's subject; defaults to the file name */
  subject?: string;
  created: string;
  /** for cell ids: c1, c2, ... never reused after a delete */
  nextId: number;
  cells: Cell[];
  /** flag bisections, whose trials are cells (added within v2: older readers carry it through) */
  bisections?: BisectionRecord[];
}

export function emptyNotebook(created: string): Notebook {
  return { version: NOTEBOOK_VERSION, created, nextId: 1, cells: [] };
}
