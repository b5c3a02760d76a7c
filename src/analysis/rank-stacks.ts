/**
 * Glue between the evidence and the pure multi-rank judgements: the newest dump of each rank, the
 * ranks whose stack requests went unanswered, the stack diff, and the culprit of a hang.
 */
import type { DumpEvent, DumpRequestEvent } from '../ingest/events.js';
import type { EvidenceState } from './evidence-state.js';
import type { CurrentSilence } from './silences.js';
import { rankOfDump } from './silences.js';
import { inCollective, programFrames, type StackDiff, stackDiff, stackKey } from './stack-diff.js';
import { type StallCulprit, stallCulpritOf } from './stall-culprit.js';
import { userFrame } from './user-frame.js';

/** the newest dump of each rank taken at or after `sinceTs` (dumps of unknown rank are left out) */
function newestDumpPerRank(s: EvidenceState, sinceTs: number): Map<number, DumpEvent> {
  const out = new Map<number, DumpEvent>();
  for (const d of s.dumps.values()) {
    if ((d.ts ?? Infinity) < sinceTs) continue;
    const rank = rankOfDump(s, d.file);
    if (rank === undefined) continue;
    const cur = out.get(rank);
    // a dump with no program frame under its handler says nothing: any other one is better
    const empty = (x: DumpEvent) => programFrames(x).length === 0;
    if (cur === undefined || (empty(cur) && !empty(d)) || ((d.ts ?? 0) >= (cur.ts ?? 0) && !empty(d)))
      out.set(rank, d);
  }
  return out;
}

/** each rank's newest stack request since `sinceTs`, by rank */
function lastRequests(s: EvidenceState, sinceTs: number): Map<number, DumpRequestEvent> {
  const last = new Map<number, DumpRequestEvent>();
  for (const r of s.dumpRequests) if (r.ts >= sinceTs) last.set(r.rank, r);
  return last;
}

/**
 * What the silent ranks' stacks say since the first of them fell silent: the newest dump of each
 * rank, and the ranks whose newest stack request got no answer from Python (blocked outside it):
 * none came, or only nsa-dbg's stack hook's, taken from C while the main thread sat in native code
 */
function stacksSince(s: EvidenceState, silences: CurrentSilence[]) {
  const since = Math.min(...silences.map((c) => c.sinceTs));
  const native = (file?: string) => file !== undefined && s.dumps.get(file)?.inPython !== true;
  const unanswered = [...lastRequests(s, since)]
    .filter(([, r]) => r.outcome === 'none-within-5s' || (r.outcome === 'faulthandler' && native(r.file)))
    .map(([rank]) => rank);
  return { dumps: newestDumpPerRank(s, since), unanswered: new Set(unanswered) };
}

/** the run's stack diff: during a multi-rank silence, the stacks taken in it; else the newest */
export function stackDiffOf(s: EvidenceState, silences: CurrentSilence[]): StackDiff | null {
  const since = silences.length > 1 ? Math.min(...silences.map((c) => c.sinceTs)) : -Infinity;
  const dumps = newestDumpPerRank(s, since);
  // ranks whose newest request got nothing at all (no stack to compare)
  const noDump = [...lastRequests(s, since === -Infinity ? 0 : since)]
    .filter(([, r]) => r.outcome === 'none-within-5s')
    .map(([rank]) => rank);
  const stateOf = (c: CurrentSilence) => c.judgement?.evidence.procState;
  const stopped = silences.filter((c) => stateOf(c) === 'T' || stateOf(c) === 't').map((c) => c.rank);
  if (dumps.size + new Set([...noDump, ...stopped]).size < 2) return null;
  return stackDiff(dumps, noDump, stopped);
}

/** the rank the others wait for, when the silent ranks' facts say which one it is */
export function culpritOf(s: EvidenceState, silences: CurrentSilence[]): StallCulprit | null {
  if (silences.length < 2) return null;
  const { dumps, unanswered } = stacksSince(s, silences);
  return stallCulpritOf(
    silences.map((c) => {
      const d = dumps.get(c.rank);
      const frames = d === undefined ? null : programFrames(d);
      return {
        rank: c.rank,
        step: c.step,
        lastTs: c.sinceTs,
        procState: c.judgement?.evidence.procState ?? null,
        stack:
          frames === null
            ? null
            : { inCollective: inCollective(frames), userTop: userFrame(frames), place: stackKey(frames) },
        unanswered: unanswered.has(c.rank),
      };
    }),
  );
}

/**
 * The ranks a culprit is told from the others by, that themselves say they wait for it: their stack
 * since the silence began is in a collective, or their request went unanswered (blocked outside
 * Python). A rank counted among the waiting by another rule alone (the first to go silent, a stopped
 * one) is not in it: its own stack is still to be read.
 */
export function waitingForCulprit(s: EvidenceState, silences: CurrentSilence[]): number[] {
  const c = culpritOf(s, silences);
  if (c === null) return [];
  const { dumps, unanswered } = stacksSince(s, silences);
  return c.waiting.filter((rank) => {
    const d = dumps.get(rank);
    return unanswered.has(rank) || (d !== undefined && inCollective(programFrames(d)));
  });
}

/**
 * The silence a hang is told by, with the culprit that chose it: on many ranks the culprit's (the
 * rank the others wait for), else the first confirmed one. One rule for the live header and the
 * verdict, so they name one rank. Undefined when no silence is a hang: silence is one once
 * confirmed on the box (stuck / blocked-native), or, when nsa-dbg did not check (someone else's
 * capture), by itself.
 */
export function headlineStall(
  s: EvidenceState,
  silences: CurrentSilence[],
): { stall: CurrentSilence; culprit: StallCulprit | null } | undefined {
  const stalls = silences.filter((c) => c.judgement === null || c.judgement.hang);
  if (stalls.length === 0) return undefined;
  const culprit = culpritOf(s, silences);
  return { stall: (culprit && silences.find((c) => c.rank === culprit.rank)) || stalls[0]!, culprit };
}

export interface SettledStall {
  culprit: number;
  waiting: number[];
}

/**
 * A hang of many ranks whose verdict is settled: its culprit is the confirmed hang, and every other
 * silent rank has given a stack (or is stopped) and waits for it. Nothing more to learn before the
 * stop; null while any of that is still open.
 */
export function settledStall(s: EvidenceState, silences: CurrentSilence[]): SettledStall | null {
  const h = headlineStall(s, silences);
  const c = h?.culprit;
  if (h === undefined || c == null || c.rank !== h.stall.rank || h.stall.judgement?.hang !== true)
    return null;
  // a stack since the silence began (from Python or native code), a request left unanswered, or
  // a stopped process: what the culprit rule reads of each rank
  const { dumps, unanswered } = stacksSince(s, silences);
  const heard = (x: CurrentSilence) =>
    dumps.has(x.rank) || unanswered.has(x.rank) || /^[Tt]$/.test(x.judgement?.evidence.procState ?? '');
  const waiting = new Set(c.waiting);
  const settled = silences.every((x) => x.rank === c.rank || (waiting.has(x.rank) && heard(x)));
  return settled ? { culprit: c.rank, waiting: c.waiting } : null;
}
