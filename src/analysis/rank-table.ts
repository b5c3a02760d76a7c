/**
 * The per-rank table of a many-rank run: each rank's step and lag behind the leader, its recent
 * step time and toks/s, a straggler score (its step time against the others'), the score of its
 * stack samples (how rarely it was found waiting for the others), and the newest probe of its process (state, CPU%).
 * Pure: the evidence in, rows out. The root-cause rank and the stack diff come from the same
 * judgements the verdict uses (rank-stacks.ts).
 */
import type { ProcState } from '../ingest/events.js';
import type { EvidenceState } from './evidence-state.js';
import { culpritOf, stackDiffOf } from './rank-stacks.js';
import type { CrashReport, StallReport } from './result.js';
import type { CurrentSilence } from './silences.js';
import type { StackDiff } from './stack-diff.js';
import { median, round2, type StepRecord } from './step-stats.js';
import { stragglersOf } from './straggler.js';

/** step durations averaged (median) for a rank's step time */
const RECENT_STEPS = 5;
/** steps looked at below a rank's current one */
const LOOK_BACK = 2 * RECENT_STEPS + 2;
/** a straggler score at or above this marks the rank as slow */
export const STRAGGLER_FLAG = 1.5;

export interface RankRow {
  rank: number;
  step: number;
  /** the leader's step minus this rank's */
  lag: number;
  /** median of the rank's newest step durations, seconds; null before two steps */
  stepTimeS: number | null;
  toksPerS: number | null;
  /**
   * this rank's step time ÷ the median of all ranks' step times (1.00 = on par), raised to the
   * rank's lag in steps where it trails: null when its step time is unknown
   */
  straggler: number | null;
  /**
   * from stack samples (straggler.ts): 1 − the share of samples that found the rank waiting in a
   * collective (1 = never waiting: the one the others wait for); null when it was never sampled
   */
  score: number | null;
  /** the rank is named the straggler (its score stands out with confidence) */
  namedStraggler: boolean;
  /** the newest probe of the rank's process on the box (probes run while a rank is silent) */
  procState: ProcState | null;
  cpuPct: number | null;
  /** a multi-node run: the node the rank runs on and its rank there */
  node?: string;
  localRank?: number;
}

export interface ManyRanks {
  rows: RankRow[];
  /** the rank the others wait for (a hang), or the one that failed first (a crash) */
  rootCause: { rank: number; why: string } | null;
  stackDiff: StackDiff | null;
}

type RecentSteps = ReadonlyMap<number, StepRecord> | undefined;

/**
 * the durations between the rank's consecutive steps, `pick` to `pick`, over the steps just below
 * its current one (never the whole window), newest RECENT_STEPS of them. Read in place: a 512-rank
 * table a second made thousands of [step, record] pairs for this, and their garbage.
 */
function gapsOf(recent: RecentSteps, step: number, pick: 'endTs' | 'startTs'): number[] {
  const out: number[] = [];
  if (recent === undefined) return out;
  let prev: StepRecord | undefined;
  for (let k = Math.max(0, step - LOOK_BACK); k <= step; k++) {
    const r = recent.get(k);
    const ta = prev?.[pick];
    const tb = r?.[pick];
    if (ta !== undefined && tb !== undefined && tb >= ta) out.push(tb - ta);
    prev = r;
  }
  return out.length > RECENT_STEPS ? out.slice(-RECENT_STEPS) : out;
}

function stepTime(recent: RecentSteps, step: number): number | null {
  const d = gapsOf(recent, step, 'endTs');
  return median(d.length > 0 ? d : gapsOf(recent, step, 'startTs'));
}

function newestToks(recent: RecentSteps, step: number): number | null {
  if (recent === undefined) return null;
  for (let k = step; k >= Math.max(0, step - LOOK_BACK); k--) {
    const v = recent.get(k)?.toksPerS;
    if (v !== undefined) return v;
  }
  return null;
}

/** `steps`: each rank's step as the stall detector has it (the heartbeat panel's numbers) */
export function rankRows(s: EvidenceState, steps: Array<{ rank: number; step: number }>): RankRow[] {
  const leader = Math.max(0, ...steps.map((r) => r.step));
  const probe = new Map<number, EvidenceState['procProbes'][number]>();
  for (const p of s.procProbes) {
    const cur = probe.get(p.rank);
    if (cur === undefined || p.ts >= cur.ts) probe.set(p.rank, p);
  }
  const times = new Map<number, number | null>();
  for (const r of steps) times.set(r.rank, stepTime(s.steps.get(r.rank)?.recent, r.step));
  const known = [...times.values()].filter((t): t is number => t !== null && t > 0);
  const par = median(known);
  const sampled = new Map(stragglersOf(s).map((x) => [x.rank, x]));
  const rows = steps.map((r) => {
    const t = times.get(r.rank) ?? null;
    const lag = leader - r.step;
    const ratio = t !== null && par !== null && par > 0 ? t / par : null;
    const p = probe.get(r.rank);
    const place = s.nodes.placeOf(r.rank);
    const row: RankRow = {
      rank: r.rank,
      step: r.step,
      lag,
      stepTimeS: t,
      toksPerS: newestToks(s.steps.get(r.rank)?.recent, r.step),
      straggler: ratio === null ? null : round2(Math.max(ratio, 1 + lag)),
      score: sampled.get(r.rank)?.score ?? null,
      namedStraggler: sampled.get(r.rank)?.named === true,
      procState: p?.state ?? null,
      cpuPct: p?.cpuPct ?? null,
    };
    if (place !== undefined) {
      row.node = place.node;
      row.localRank = place.localRank;
    }
    return row;
  });
  // grouped by node (agent order), rank order within a node
  const task = (r: RankRow) => s.nodes.placeOf(r.rank)?.task ?? Number.MAX_SAFE_INTEGER;
  return rows.sort((a, b) => task(a) - task(b) || a.rank - b.rank);
}

/** live: the culprit of the current multi-rank silence, and the stacks taken in it */
export function manyRanksLive(
  s: EvidenceState,
  steps: Array<{ rank: number; step: number }>,
  silences: CurrentSilence[],
): ManyRanks {
  const c = culpritOf(s, silences);
  return {
    rows: rankRows(s, steps),
    rootCause: c === null ? null : { rank: c.rank, why: c.why },
    stackDiff: stackDiffOf(s, silences),
  };
}

/** after the end: the verdict's own root cause (a hang's culprit, or the crashing rank) and diff */
export function manyRanksOf(
  rows: RankRow[],
  r: { stall: StallReport | null; crash: CrashReport | null; stackDiff: StackDiff | null },
): ManyRanks {
  const rootCause =
    r.stall !== null
      ? { rank: r.stall.rank, why: r.stall.rootCause?.why ?? `silent at step ${r.stall.step}` }
      : r.crash !== null
        ? { rank: r.crash.rank, why: `${r.crash.exception}: ${r.crash.message}`.slice(0, 200) }
        : null;
  return { rows, rootCause, stackDiff: r.stackDiff };
}
