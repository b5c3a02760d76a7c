import type { Acceptance } from '../presets/preset.js';
import type { AnalysisResult } from './evidence.js';
import { isRecovered, recoveredLine } from './recovered.js';

export interface AcceptanceOutcome {
  go: boolean;
  /** one line per failed criterion; for a GO, only why it is slow (if it is); and any hang that recovered */
  reasons: string[];
}

/** A lane's GO/NO-GO: the runbook criteria applied to the analysed evidence. */
export function judge(r: AnalysisResult, acc: Acceptance, steps?: number): AcceptanceOutcome {
  const reasons: string[] = [];
  const need = acc.steps ?? steps;
  if (need !== undefined && r.stepsReached < need) reasons.push(`reached step ${r.stepsReached} of ${need}`);
  if (acc.finiteLoss && r.nan) reasons.push(`non-finite loss at step ${r.nan.step} (rank ${r.nan.rank})`);
  if (acc.noStall && r.stall)
    reasons.push(`stall at step ${r.stall.step} (${r.stall.where}, rank ${r.stall.rank})`);
  for (const m of r.flightRecorder ?? [])
    reasons.push(`rank ${m.ranks.join(', ')} never entered ${m.op} #${m.seq} (${m.pg}): collective timeout`);
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
  return { go, reasons };
}
