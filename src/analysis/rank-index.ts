/**
 * The evidence's probe records and dumps grouped by rank, built once per change of the evidence and
 * shared by every question asked of it until the next change. Judging each silent rank used to
 * scan every dump, and for each dump every request (to find its rank): at a hang of 256 ranks with
 * a few hundred dumps and requests that is tens of millions of steps per look, several looks a
 * second, and the engine had no time left to conclude the run. Grouped, a look costs what the
 * evidence holds, once.
 */
import type { DumpRequestEvent, ProcProbeEvent } from '../ingest/events.js';
import { type EvidenceState, ranksOf } from './evidence-state.js';

export interface RankIndex {
  /** dump file names by rank (the dump itself is looked up when used: a re-read replaces it) */
  dumps: Map<number, string[]>;
  /** dumps whose rank is not known (several ranks, no request names them) */
  unplaced: string[];
  procs: Map<number, ProcProbeEvent[]>;
  requests: Map<number, DumpRequestEvent[]>;
  /** the rank of a dump, by its file name */
  rankOfFile: Map<string, number>;
}

const built = new WeakMap<EvidenceState, { key: string; index: RankIndex }>();

/**
 * What the index depends on: every event added moves the revision; the sizes guard against a state
 * changed some other way.
 */
function keyOf(s: EvidenceState): string {
  return `${s.revision}|${s.dumps.size}|${s.dumpRequests.length}|${s.procProbes.length}|${s.workers.size}|${s.ranks.size}`;
}

export function rankIndex(s: EvidenceState): RankIndex {
  const key = keyOf(s);
  const hit = built.get(s);
  if (hit !== undefined && hit.key === key) return hit.index;
  const index = build(s);
  built.set(s, { key, index });
  return index;
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list === undefined) m.set(k, [v]);
  else list.push(v);
}

function build(s: EvidenceState): RankIndex {
  const rankOfFile = new Map<string, number>();
  const requests = new Map<number, DumpRequestEvent[]>();
  // the newest request naming a file wins (the same name can be asked again)
  for (const r of s.dumpRequests) {
    if (r.file !== undefined) rankOfFile.set(r.file, r.rank);
    push(requests, r.rank, r);
  }
  const procs = new Map<number, ProcProbeEvent[]>();
  for (const p of s.procProbes) push(procs, p.rank, p);
  const logRank = new Map<string, number>();
  for (const w of s.workers.values()) if (!logRank.has(w.file)) logRank.set(w.file, w.rank);
  const ranks = ranksOf(s);
  const onlyRank = ranks.length <= 1 ? (ranks[0] ?? 0) : undefined;
  const dumps = new Map<number, string[]>();
  const unplaced: string[] = [];
  for (const file of s.dumps.keys()) {
    let rank = rankOfFile.get(file);
    if (rank === undefined) {
      // a dump of nsa-dbg's stack hook is named by its rank's stack log (`<log>@<request>`)
      const at = file.lastIndexOf('@');
      if (at > 0) {
        const log = file.slice(0, at);
        rank = logRank.get(log);
        const m = rank === undefined ? /_rank(\d+)_pid\d+\.log$/.exec(log) : null;
        if (m !== null && m !== undefined) rank = Number(m[1]);
      }
    }
    rank ??= onlyRank;
    if (rank === undefined) unplaced.push(file);
    else {
      rankOfFile.set(file, rank);
      push(dumps, rank, file);
    }
  }
  return { dumps, unplaced, procs, requests, rankOfFile };
}
