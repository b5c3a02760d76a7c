/**
 * The words for a hang that recovered (src/analysis/silences.ts finds them): said in the verdict's
 * summary and reasons and on the dashboard's banner, so a 78 s SIGSTOP undone by SIGCONT is not
 * forgotten the moment the rank speaks again.
 */
import type { PastStallReport } from './result.js';
import { cpuBusy } from './stall-judge.js';

/** a past stall the checks had confirmed as a hang before it recovered */
export type RecoveredStall = PastStallReport & Required<Pick<PastStallReport, 'state' | 'evidence'>>;

export const isRecovered = (p: PastStallReport): p is RecoveredStall =>
  p.state !== undefined && p.evidence !== undefined;

/** what the checks found it doing while it was hung, in a few words */
function how(r: RecoveredStall): string {
  const { procState, cpuPct } = r.evidence;
  if (procState === 'T' || procState === 't') return `stopped, state ${procState}`;
  if (r.state === 'blocked-native') return 'blocked outside Python';
  const cpu = cpuPct === null ? '' : `, CPU ${Math.round(cpuPct)}%`;
  return cpuBusy(procState, cpuPct) ? `spinning${cpu}` : `asleep on one frame${cpu}`;
}

/** "recovered after 78 s stalled at step 572 (stopped, state T)" */
export function recoveredLine(r: RecoveredStall): string {
  return `recovered after ${Math.round(r.silenceS ?? 0)} s stalled at step ${r.step} (${how(r)})`;
}

/** the newest recovered hang's line, and how many came before it: one line for a banner or a summary */
export function recoveredSummary(past: readonly PastStallReport[]): string | null {
  const list = past.filter(isRecovered);
  const last = list[list.length - 1];
  if (last === undefined) return null;
  const more = list.length - 1;
  return `${recoveredLine(last)}${more ? ` (and ${more} earlier)` : ''}`;
}
