/**
 * Stack diff across ranks: in a DDP hang every rank but the culprit sits in the same place (the
 * collective that waits for it), so grouping ranks by identical main-thread stacks makes the odd
 * one out stand out. Pure: the newest dump of each rank in, groups out, biggest group first.
 */
import type { DumpEvent, Frame } from '../ingest/events.js';
import { mainThread, mainThreadTop } from '../ingest/stackdump.js';
import { userFrame } from './user-frame.js';

export interface StackGroup {
  ranks: number[];
  /** the main thread's frames below the dump handler, outermost first */
  frames: Frame[];
  /** innermost frame in the user's code (where to look) */
  userTop: Frame | null;
  /** the stack waits in a collective (torch.distributed, DDP's reducer, a barrier) */
  inCollective: boolean;
  /** a rank in a group smaller than the biggest one, when there is more than one group */
  odd: boolean;
}

export interface StackDiff {
  groups: StackGroup[];
  /** ranks asked for a stack that gave none within 5 s: blocked outside Python (a collective?) */
  noDump: number[];
  /** ranks stopped (state T) that gave no stack: no signal is handled until SIGCONT; not waiting */
  stopped: number[];
}

/** Function names and files of a rank waiting for its peers. */
const COLLECTIVE_FN =
  /^(?:all_reduce|all_gather\w*|reduce_scatter\w*|broadcast\w*|barrier|monitored_barrier|all_to_all\w*|gather|scatter|reduce|send|recv|wait|_wait|synchronize)$/;
const COLLECTIVE_FILE = /torch\/distributed\/|torch\/nn\/parallel\/distributed\.py|torch\/cuda\/streams\.py/;
/** names that are a collective whoever wrote them (a framework's wrapper, a test's stand-in) */
const NAMED_COLLECTIVE = /^(?:all_reduce|all_gather\w*|reduce_scatter\w*|broadcast|barrier|all_to_all\w*)$/;

/** frames the program was in when the handler interrupted it (the handler's own frames dropped) */
export function programFrames(d: DumpEvent): Frame[] {
  const frames = mainThread(d)?.frames ?? [];
  const top = mainThreadTop(d);
  // no frame below the handler: the handler ran with nothing of the program under it
  if (top === undefined) return [];
  return frames.slice(0, frames.lastIndexOf(top) + 1);
}

export function inCollective(frames: Frame[]): boolean {
  const top = frames[frames.length - 1];
  if (top === undefined) return false;
  // the innermost frames decide: a collective called from anywhere, or DDP's own sync points
  return frames.slice(-3).some((f) => {
    const fn = f.function.replace(/^_+/, '');
    return (COLLECTIVE_FILE.test(f.file) && COLLECTIVE_FN.test(fn)) || NAMED_COLLECTIVE.test(fn);
  });
}

/** one string for a stack's frames: equal stacks, equal keys */
export const stackKey = (frames: Frame[]) =>
  frames.map((f) => `${f.file}:${f.line}:${f.function}`).join('\n');

/**
 * `dumps`: the newest dump of each rank; `noDump`: ranks whose stack request went unanswered;
 * `stopped`: ranks in state T with no stack (they cannot answer, and they are not waiting)
 */
export function stackDiff(
  dumps: Map<number, DumpEvent>,
  noDump: number[] = [],
  stopped: number[] = [],
): StackDiff {
  const byKey = new Map<string, StackGroup>();
  for (const [rank, d] of [...dumps.entries()].sort((a, b) => a[0] - b[0])) {
    const frames = programFrames(d);
    const k = stackKey(frames);
    const g = byKey.get(k);
    if (g !== undefined) g.ranks.push(rank);
    else
      byKey.set(k, {
        ranks: [rank],
        frames,
        userTop: userFrame(frames),
        inCollective: inCollective(frames),
        odd: false,
      });
  }
  const groups = [...byKey.values()].sort(
    (a, b) => b.ranks.length - a.ranks.length || a.ranks[0]! - b.ranks[0]!,
  );
  const still = [...new Set(stopped)].filter((r) => !dumps.has(r)).sort((a, b) => a - b);
  const blocked = [...new Set(noDump)]
    .filter((r) => !dumps.has(r) && !still.includes(r))
    .sort((a, b) => a - b);
  // ranks that gave no stack were blocked outside Python: they count as waiting
  const someoneWaits = blocked.length > 0 || groups.some((g) => g.inCollective);
  const biggest = Math.max(blocked.length, ...groups.map((g) => g.ranks.length));
  if (groups.length + (blocked.length > 0 ? 1 : 0) > 1)
    for (const g of groups) g.odd = g.ranks.length < biggest || (someoneWaits && !g.inCollective);
  return { groups, noDump: blocked, stopped: still };
}
