/**
 * The stalls that ended, reconciled across a rank's sources of progress: each source's tracker
 * records the silences it saw end (progress-tracker.ts); here they become the rank's stalls, once
 * each, placed where the live hang placed them. Apart from the detector because it looks back over
 * every source at once, where the detector judges each rank now.
 */
import type { StepSource } from '../ingest/events.js';
import type { ProgressTracker } from './progress-tracker.js';
import { SOURCE_PREFERENCE, type StallInfo } from './stall-types.js';

/** A stall that ended because records resumed (a freeze, SIGSTOP, a slow collective...). */
export interface PastStall extends StallInfo {
  /** epoch seconds when the silence crossed the threshold, and when records resumed */
  declaredTs: number;
  resumedTs: number;
}

/** a stall as one source's tracker recorded it, before the sources are taken together */
export type RecordedStall = PastStall & { source: StepSource; firstStep: boolean; fromPosition: number };

/** each rank's trackers, one per source */
export type TrackersByRank = ReadonlyMap<number, ReadonlyMap<StepSource, ProgressTracker>>;

/** how far apart two sources may time one moment (a record and the output line printed with it) */
const SOURCE_SKEW_S = 1;

/** the longest interval between `from`, the times (ascending) and `to` */
function longestGap(from: number, times: number[], to: number): number {
  let longest = 0;
  let prev = from;
  for (const t of [...times, to]) {
    longest = Math.max(longest, t - prev);
    prev = t;
  }
  return longest;
}

/**
 * Stalls that ended when records resumed, by when they were declared (then rank), once each: a
 * silence of one source counts when the rank was silent past the threshold within it, every
 * source taken together (what another source said in it cuts it into shorter silences).
 */
export function reconcilePastStalls(
  past: readonly RecordedStall[],
  ranks: TrackersByRank,
  started: ReadonlyMap<number, number>,
): PastStall[] {
  const kept: RecordedStall[] = [];
  for (const p of past) {
    const { fromPosition } = p;
    const others = [...(ranks.get(p.rank) ?? new Map<StepSource, ProgressTracker>())].filter(
      ([s]) => s !== p.source,
    );
    const start = p.declaredTs - p.thresholdS;
    // the first step's wait, ended within its allowance counted from the last rank's start
    if (p.firstStep && p.resumedTs - latestStartBefore(started, p.resumedTs, start) <= p.thresholdS) continue;
    // sources are timed differently (a heartbeat by the trainer, an output line when nsa-dbg read
    // it, up to a poll later, more on a loaded box): what another source said near either end is
    // the same moment, and only what put the rank past where this source left it is progress
    const margin = Math.min(SOURCE_SKEW_S, p.silenceS / 4);
    const spoke = others
      .flatMap(([, t]) => t.times.between(start + margin, p.resumedTs - margin, fromPosition))
      .sort((a, b) => a - b);
    if (longestGap(start, spoke, p.resumedTs) <= p.thresholdS) continue;
    const same = kept.findIndex(
      (k) => k.rank === p.rank && k.declaredTs - k.thresholdS < p.resumedTs && start < k.resumedTs,
    );
    if (same < 0) kept.push(p);
    else if (SOURCE_PREFERENCE.indexOf(p.source) < SOURCE_PREFERENCE.indexOf(kept[same]!.source))
      kept[same] = p;
  }
  return kept
    .map(({ source, firstStep: _f, fromPosition, ...p }) => ({
      ...p,
      ...placedBy(ranks, p, source, fromPosition),
    }))
    .sort((a, b) => a.declaredTs - b.declaredTs || a.rank - b.rank);
}

/**
 * Where a recovered stall was, as the live hang said it: a richer source still silent past its own
 * threshold when this one spoke again, and further on than this one before the silence, places it
 * (the demo's step line came through the terminal a poll before its heartbeat was read: for that
 * moment the stall read "step 5", where the hang it replaced had said "step 6, in it"). A source
 * that went quiet long before (a heartbeat file abandoned at step 2) is behind, and places nothing.
 */
function placedBy(
  ranks: TrackersByRank,
  p: PastStall,
  source: StepSource,
  fromPosition: number,
): Pick<PastStall, 'step' | 'where'> {
  const bySource = ranks.get(p.rank);
  for (const s of SOURCE_PREFERENCE.slice(0, SOURCE_PREFERENCE.indexOf(source))) {
    const t = bySource?.get(s);
    if (t === undefined || t.lastTs === null || t.waiting === null) continue;
    if (t.lastTs >= p.resumedTs || p.resumedTs - t.lastTs <= t.threshold()) continue;
    if (t.lastPosition >= fromPosition) return { step: t.waitingStep, where: t.waiting };
  }
  return { step: p.step, where: p.where };
}

/** the latest start of any rank before `beforeTs` (`floor` when none was later) */
function latestStartBefore(started: ReadonlyMap<number, number>, beforeTs: number, floor: number): number {
  let latest = floor;
  for (const ts of started.values()) if (ts < beforeTs) latest = Math.max(latest, ts);
  return latest;
}
