/**
 * The culprit of a multi-rank hang. When one rank stops (frozen, stuck in its own code, behind),
 * every other rank soon waits for it inside a collective, and all of them fall silent: the first
 * silent rank is an accident of timing. The culprit is the rank that is not in a collective: it is
 * stopped (state T), or its stack shows the user's code while the others' stacks show a collective
 * or no dump at all (blocked outside Python), or its stack is the odd one out while all the others
 * stand at one place, or it is behind the others, or it stopped beating first. Pure.
 */
import type { Frame, ProcState } from '../ingest/events.js';
import { rankSetText } from '../util/rank-set.js';

export interface RankAtStall {
  rank: number;
  step: number;
  /** epoch seconds of its last heartbeat */
  lastTs: number;
  procState: ProcState | null;
  /** its newest stack during the silence: null when none was taken; `place` names its frames */
  stack: { inCollective: boolean; userTop: Frame | null; place: string } | null;
  /** a stack was asked for during the silence and none came within 5 s */
  unanswered: boolean;
}

export interface StallCulprit {
  rank: number;
  /** one line: why this rank */
  why: string;
  /** the ranks that wait for it */
  waiting: number[];
}

/** a rank that stopped beating this much before the next one stopped first */
const FIRST_SILENT_MARGIN_S = 2;

const waits = (r: RankAtStall) => r.unanswered || r.stack?.inCollective === true;
const at = (f: Frame | null) => (f === null ? '' : ` (${f.function} ${f.file}:${f.line})`);
/** the ranks of `ranks` other than `r`, sorted */
const others = (ranks: RankAtStall[], r: RankAtStall) =>
  ranks
    .filter((o) => o !== r)
    .map((o) => o.rank)
    .sort((a, b) => a - b);

export function stallCulpritOf(ranks: RankAtStall[]): StallCulprit | null {
  if (ranks.length < 2) return null;
  const one = (list: RankAtStall[]) => (list.length === 1 ? list[0]! : undefined);
  const stopped = one(ranks.filter((r) => r.procState === 'T' || r.procState === 't'));
  if (stopped !== undefined)
    return {
      rank: stopped.rank,
      why: 'stopped (state T) while the others wait for it',
      waiting: others(ranks, stopped),
    };
  const waiting = ranks.filter(waits).sort((a, b) => a.rank - b.rank);
  const inOwnCode = one(ranks.filter((r) => r.stack !== null && !r.stack.inCollective && !r.unanswered));
  if (inOwnCode !== undefined && waiting.length > 0)
    return {
      rank: inOwnCode.rank,
      why: `is in its own code${at(inOwnCode.stack!.userTop)} while ${rankSetText(waiting.map((r) => r.rank))} ${waiting.length > 1 ? 'wait' : 'waits'} in a collective`,
      waiting: waiting.map((r) => r.rank),
    };
  const odd = oddStackOut(ranks);
  if (odd !== undefined) return odd;
  const minStep = Math.min(...ranks.map((r) => r.step));
  const behind = one(ranks.filter((r) => r.step === minStep));
  if (behind !== undefined)
    return {
      rank: behind.rank,
      why: `behind the others: step ${behind.step}, the others reached step ${Math.min(...ranks.filter((r) => r !== behind).map((r) => r.step))}`,
      waiting: others(ranks, behind),
    };
  const byLast = [...ranks].sort((a, b) => a.lastTs - b.lastTs);
  if (byLast[1]!.lastTs - byLast[0]!.lastTs >= FIRST_SILENT_MARGIN_S)
    return {
      rank: byLast[0]!.rank,
      why: `stopped beating first, ${Math.round(byLast[1]!.lastTs - byLast[0]!.lastTs)} s before the others`,
      waiting: others(ranks, byLast[0]!),
    };
  return null;
}

/**
 * Every other rank's stack at one place and this rank's elsewhere. DDP's gradient all_reduce runs
 * inside the autograd engine, so the ranks waiting in it show only `loss.backward()`, no collective
 * frame; and whether a native-blocked rank counts as "unanswered" can turn on the last stack request
 * only (Python runs again once the run is stopped). Two places, one of them held by one rank and the
 * other by at least two: the one rank is where the others wait.
 */
function oddStackOut(ranks: RankAtStall[]): StallCulprit | undefined {
  const places = new Map<string, RankAtStall[]>();
  for (const r of ranks) {
    if (r.stack === null) continue;
    const group = places.get(r.stack.place);
    if (group === undefined) places.set(r.stack.place, [r]);
    else group.push(r);
  }
  if (places.size !== 2) return undefined;
  const [alone, crowd] = [...places.values()].sort((a, b) => a.length - b.length) as [
    RankAtStall[],
    RankAtStall[],
  ];
  if (alone.length !== 1 || crowd.length < 2) return undefined;
  const culprit = alone[0]!;
  return {
    rank: culprit.rank,
    // a rank set in words that do not grow with the job ("255 ranks (0–254)")
    why: `is the odd one out${at(culprit.stack!.userTop)}: ${rankSetText(crowd.map((r) => r.rank))} all wait in one place${at(crowd[0]!.stack!.userTop)}`,
    waiting: others(ranks, culprit),
  };
}
