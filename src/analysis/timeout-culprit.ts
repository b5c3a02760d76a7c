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
import type { StallCulprit } from './stall-culprit.js';

const TIMED_OUT = /Timed out waiting \d+ms for (?:recv|send) operation to complete/;

export function timeoutCulprit(
  s: Pick<EvidenceState, 'tracebacks' | 'ranks' | 'workers'>,
): StallCulprit | null {
  const timedOut = new Set<number>();
  for (const t of s.tracebacks)
    if (t.ev.rank !== undefined && TIMED_OUT.test(t.ev.message)) timedOut.add(t.ev.rank);
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
