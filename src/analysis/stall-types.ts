/** What the stall detector says of a silent rank, now and after it spoke again. */
import type { StepSource } from '../ingest/events.js';

/** Which phase a silent rank is waiting in (the runbook localisation). */
export type StallWhere = 'boot' | 'in-step' | 'end-of-step' | 'rollover';

export interface StallInfo {
  rank: number;
  step: number;
  where: StallWhere;
  silenceS: number;
  thresholdS: number;
}

/** which source localises a rank when several report it: the richest first */
export const SOURCE_PREFERENCE: readonly StepSource[] = ['beat', 'output', 'table'];
