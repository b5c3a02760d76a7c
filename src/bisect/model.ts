/**
 * A bisection as the notebook keeps it: plain data beside the cells (its trials are cells, tagged
 * with the bisection and the trial), so the TUI table, the report and `bisect --json` all read the
 * same record, and a later bisection finds earlier trials by their key.
 */
import type { DdminStatus, Outcome } from './ddmin.js';
import type { Change } from './delta.js';

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
  /** one cell per repeat; a cached one may belong to an earlier bisection */
  cells: string[];
  cached: boolean[];
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
  changes: Change[];
  /** the bad side's verdict class, once known: what a trial must show to count as failing */
  verdictClass?: string;
  trials: BisectTrialRecord[];
  result?: {
    status: DdminStatus;
    minimal: number[];
    proven: boolean;
    /** runs made (cache hits excluded) */
    runs: number;
    conclusion: string;
  };
  /** why it failed or stopped */
  error?: string;
}
