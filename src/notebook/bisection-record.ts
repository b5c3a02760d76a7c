/**
 * A bisection as the notebook keeps it (the notebook file's record; bisect/ reads and writes it): plain data beside the cells (its trials are cells, tagged
 * with the bisection and the trial), so the TUI table, the report and `bisect --json` all read the
 * same record, and a later bisection finds earlier trials by their key.
 */

/** one change of the search space: an env variable or trainer option that differs between the sides */
export interface Change {
  kind: 'env' | 'arg' | 'args';
  /** the variable or option name (`args` for the whole argument list) */
  name: string;
  /** the value on each side; null: unset / absent; '' for an option without a value */
  good: string | null;
  bad: string | null;
  /** kind `args`: the two argument lists */
  argv?: { good: string[]; bad: string[] };
}

/** what one run of a trial showed */
export type Outcome = 'fail' | 'pass' | 'unresolved';

export type SearchStatus =
  /** one candidate reached the confidence asked for */
  | 'found'
  /** the run budget was spent below the confidence */
  | 'uncertain'
  /** the good side does not pass: nothing to bisect against */
  | 'good-fails'
  /** all the changes applied to the good side never reproduced the failure */
  | 'not-reproduced'
  /** the budget ran out before even the endpoints were known */
  | 'budget';

/** on a trial's cell */
export interface CellBisect {
  /** the bisection (b1, b2, ...) */
  id: string;
  /** the trial's index in that bisection */
  trial: number;
  /** hash of everything that decides the run (resolved env, args, command, steps, target) */
  key: string;
}

export interface BisectTrialRecord {
  index: number;
  /** indices into the bisection's changes */
  subset: number[];
  /** one cell per run of this subset; a cached one may belong to an earlier bisection */
  cells: string[];
  cached: boolean[];
  /** per cell: false when its process did not see the intended changes (no evidence) */
  applied?: boolean[];
  /** each run's outcome, in the order of `cells` */
  outcomes?: Outcome[];
  outcome: Outcome | 'flaky';
}

export interface BisectionRecord {
  id: string;
  created: string;
  ended?: string;
  state: 'running' | 'done' | 'failed' | 'stopped';
  good: { lane: string; cell?: string };
  bad: { lane: string; cell?: string };
  target: string;
  steps?: number;
  budget?: number;
  repeat: number;
  /** the posterior a candidate must reach, and the most runs (absent in bisections before them) */
  confidence?: number;
  maxRuns?: number;
  changes: Change[];
  /** the bad side's verdict class, once known: what a trial must show to count as failing */
  verdictClass?: string;
  trials: BisectTrialRecord[];
  /** the posterior as it stands, after every run (the live view reads it) */
  posterior?: Posterior;
  result?: {
    status: SearchStatus;
    minimal: number[];
    proven: boolean;
    /** runs made (cache hits excluded) */
    runs: number;
    conclusion: string;
    /** changes no run applied: every run meant to have one saw something else */
    neverApplied?: Array<{ name: string; runs: number; saw: string }>;
  };
  /** why it failed or stopped */
  error?: string;
}

export interface Posterior {
  /** the likeliest candidates, best first: indices into changes */
  culprits: Array<{ changes: number[]; posterior: number }>;
  /** posterior means: the culprit's failure rate per run and the background flake rate */
  failureRate: { culprit: number; background: number };
  /** runs taken as evidence */
  evidence: number;
}
