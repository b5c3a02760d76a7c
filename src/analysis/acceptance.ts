import type { Acceptance } from '../lanes/lane.js';
import { rankSetText } from '../util/rank-set.js';
import type { AnalysisResult } from './evidence.js';
import { isRecovered, recoveredLine } from './recovered.js';

export interface AcceptanceOutcome {
  go: boolean;
  /** one line per failed criterion; for a GO, only why it is slow (if it is); and any hang that recovered */
  reasons: string[];
  /** the step target and how the run is known to have reached it (or not); absent without a target */
  target?: { steps: number; reached: boolean; how: string };
}

/**
 * Did the run get to `need` steps? A trainer that counts from 0 and logs every k steps never prints
 * step `need`: a run that exits 0 with its last step line within one logging interval of the target
 * got there; so did one that ended with the trainer's own closing summary.
 */
export function targetReached(r: AnalysisResult, need: number): { reached: boolean; how: string } {
  const f = r.stepFormat;
  const base0 = f?.base === 0;
  // a counter from 0: step N logged means N + 1 steps done
  const done = r.stepsReached > 0 || base0 ? r.stepsReached + (base0 ? 1 : 0) : 0;
  const from0 = base0 ? ', counting from 0' : '';
  if (done >= need)
    return { reached: true, how: `${done} steps done (last step logged: ${r.stepsReached}${from0})` };
  const clean = r.exitCode === 0 && r.verdict !== 'stopped';
  const every = f?.every ?? 1;
  if (clean && every > 1 && done > 0 && need - done < every)
    return {
      reached: true,
      how: `exit 0 with the last step logged (${r.stepsReached}) within one logging interval (every ${every}${from0}) of ${need}`,
    };
  if (clean && r.closingSummary)
    return {
      reached: true,
      how: `exit 0 after the trainer's closing summary (last step logged: ${r.stepsReached})`,
    };
  return { reached: false, how: `reached step ${r.stepsReached} of ${need}` };
}

/** A lane's GO/NO-GO: the runbook criteria applied to the analysed evidence. */
export function judge(r: AnalysisResult, acc: Acceptance, steps?: number): AcceptanceOutcome {
  const reasons: string[] = [];
  const need = acc.steps ?? steps;
  const target = need === undefined ? undefined : { steps: need, ...targetReached(r, need) };
  if (target !== undefined && !target.reached) reasons.push(target.how);
  if (acc.finiteLoss && r.nan) reasons.push(`non-finite loss at step ${r.nan.step} (rank ${r.nan.rank})`);
  if (acc.noStall && r.stall)
    reasons.push(`stall at step ${r.stall.step} (${r.stall.where}, rank ${r.stall.rank})`);
  for (const m of r.flightRecorder ?? [])
    reasons.push(`${rankSetText(m.ranks)} never entered ${m.op} #${m.seq} (${m.pg}): collective timeout`);
  if (r.crash)
    reasons.push(
      `${r.crash.basis === 'launcher-error' ? 'the launcher failed before training' : 'crash'}: ${r.crash.exception}${r.crash.message ? `: ${r.crash.message.split('\n')[0]}` : ''}`,
    );
  if (acc.vramLimitMiB !== undefined && r.memory && r.memory.peakReservedMiB > acc.vramLimitMiB)
    reasons.push(`peak reserved ${r.memory.peakReservedMiB} MiB > limit ${acc.vramLimitMiB} MiB`);
  if (r.verdict !== 'pass' && r.verdict !== 'slow' && reasons.length === 0)
    reasons.push(`verdict ${r.verdict}`);
  const go = reasons.length === 0;
  // slow but alive passes its acceptance: still GO, and the reason is said (the summary says a
  // recovered hang too); a hang that recovered is said either way, and decides nothing
  if (go && r.verdict === 'slow') reasons.push(r.summary);
  else reasons.push(...r.pastStalls.filter(isRecovered).map(recoveredLine));
  return target === undefined ? { go, reasons } : { go, reasons, target };
}
