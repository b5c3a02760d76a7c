/**
 * The rank a gloo collective's timeout points at. gloo raises on its timeout (torch 1.13 and 2.11
 * alike; no watchdog abort) in every rank that came to the collective: `Timed out waiting 3000ms
 * for recv operation to complete`. The one rank that raised no such error, while every other rank
 * did, is the one they waited for: on 3 ranks whose rank 1 sat in save_checkpoint, silence alone
 * named rank 0 (every rank fell silent in the same step). NCCL's watchdog says the same through the
 * Flight Recorder, read elsewhere (flight-recorder.ts).
 */
import { rankSetText } from '../util/rank-set.js';
import { type EvidenceState, ranksOf } from './evidence-state.js';
import type { StallReport } from './result.js';
import { GLOO_TIMED_OUT } from './signatures.js';
import type { StallCulprit } from './stall-culprit.js';

export function timeoutCulprit(
  s: Pick<EvidenceState, 'tracebacks' | 'ranks' | 'workers'>,
): StallCulprit | null {
  const timedOut = new Set<number>();
  for (const t of s.tracebacks)
    if (t.ev.rank !== undefined && GLOO_TIMED_OUT.test(t.ev.message)) timedOut.add(t.ev.rank);
  if (timedOut.size === 0) return null;
  const never = ranksOf(s).filter((r) => !timedOut.has(r));
  if (never.length !== 1) return null;
  const waiting = [...timedOut].sort((a, b) => a - b);
  return {
    rank: never[0]!,
    why: `never came to the collective that ${rankSetText(waiting)} timed out in (gloo's timeout)`,
    waiting,
  };
}

/**
 * A hang's last position moved onto the rank a gloo timeout names, where the ranks' silences
 * cannot name it (every rank went quiet in the same step); unchanged when a culprit is already
 * known or the timeout names none.
 */
export function placedOnTimeoutCulprit(
  s: Pick<EvidenceState, 'tracebacks' | 'ranks' | 'workers' | 'detector'>,
  at: StallReport,
): StallReport {
  if (at.rootCause !== undefined) return at;
  const culprit = timeoutCulprit(s);
  if (culprit === null) return at;
  const where = s.detector.position(culprit.rank);
  return {
    rank: culprit.rank,
    step: where?.step ?? at.step,
    where: where?.where ?? at.where,
    rootCause: culprit,
  };
}
