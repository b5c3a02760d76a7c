// The evidence grouped by rank (rank-index.ts) must place every dump where the scan it replaced
// placed it: the newest request naming the file, else the stack hook's log (by its worker, else by
// its name), else the only rank there is. Checked against that scan, kept here as the oracle, on
// random evidence; and the grouping must follow the evidence as it grows.
import { describe, expect, it } from 'vitest';
import type { EvidenceState } from '../../../src/analysis/evidence-state.js';
import { rankIndex } from '../../../src/analysis/rank-index.js';
import { rankOfDump } from '../../../src/analysis/silences.js';
import type { DumpEvent, DumpRequestEvent, WorkerEvent } from '../../../src/ingest/events.js';

/** the scan before the index: every request from the newest, then the workers, then the name */
function oracle(s: EvidenceState, file: string): number | undefined {
  for (let i = s.dumpRequests.length - 1; i >= 0; i--) {
    const r = s.dumpRequests[i]!;
    if (r.file === file) return r.rank;
  }
  const at = file.lastIndexOf('@');
  if (at > 0) {
    const log = file.slice(0, at);
    for (const w of s.workers.values()) if (w.file === log) return w.rank;
    const m = /_rank(\d+)_pid\d+\.log$/.exec(log);
    if (m !== null) return Number(m[1]);
  }
  const ranks = [...new Set([...s.ranks, ...s.workers.keys()])];
  return ranks.length <= 1 ? (ranks[0] ?? 0) : undefined;
}

function random(seed: number) {
  let x = seed;
  return (n: number) => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x % n;
  };
}

function state(seed: number, ranks: number): EvidenceState {
  const rnd = random(seed);
  const s = {
    revision: 0,
    ranks: new Set<number>(),
    workers: new Map<number, WorkerEvent>(),
    dumps: new Map<string, DumpEvent>(),
    dumpRequests: [] as DumpRequestEvent[],
    procProbes: [],
  } as unknown as EvidenceState;
  for (let r = 0; r < ranks; r++) s.ranks.add(r);
  // workers whose log names another rank than theirs (a guessed rank corrected), or their own
  for (let r = 0; r < ranks; r += 1 + rnd(3)) {
    const logRank = rnd(4) === 0 ? rnd(ranks) : r;
    s.workers.set(r, {
      kind: 'worker',
      rank: r,
      pid: 1000 + r,
      file: `nsa-dbg-stacks_rank${logRank}_pid${1000 + r}.log`,
    } as WorkerEvent);
  }
  for (let i = 0; i < 300; i++) {
    const rank = rnd(ranks);
    const kind = rnd(3);
    const file =
      kind === 0
        ? `stackdump_${1795000000 + rnd(50)}.txt`
        : kind === 1
          ? `nsa-dbg-stacks_rank${rank}_pid${1000 + rank}.log@${i}`
          : `nsa-dbg-stacks_rank${rnd(ranks)}_pid${5000 + rank}.log@${i}`;
    s.dumps.set(file, { kind: 'dump', file, ts: 1795000000 + i } as DumpEvent);
    if (rnd(2) === 0)
      s.dumpRequests.push({
        kind: 'dump-request',
        ts: 1795000000 + i,
        rank: rnd(ranks),
        pid: 1,
        outcome: 'written',
        purpose: 'suspect',
        file,
      });
  }
  return s;
}

describe('the evidence grouped by rank', () => {
  it('places every dump where the scan over every request placed it', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const s = state(seed, 1 + (seed % 3) * 40);
      const index = rankIndex(s);
      for (const file of s.dumps.keys()) {
        const want = oracle(s, file);
        expect(rankOfDump(s, file)).toBe(want);
        if (want === undefined) expect(index.unplaced).toContain(file);
        else expect(index.dumps.get(want)).toContain(file);
      }
    }
  });

  it('is built once per change of the evidence, and again after one', () => {
    const s = state(7, 16);
    const a = rankIndex(s);
    expect(rankIndex(s)).toBe(a);
    const file = 'stackdump_1.txt';
    s.dumps.set(file, { kind: 'dump', file, ts: 1 } as DumpEvent);
    s.dumpRequests.push({
      kind: 'dump-request',
      ts: 1,
      rank: 9,
      pid: 1,
      outcome: 'written',
      purpose: 'user',
      file,
    });
    s.revision++;
    const b = rankIndex(s);
    expect(b).not.toBe(a);
    expect(b.dumps.get(9)).toContain(file);
    expect(rankOfDump(s, file)).toBe(9);
  });
});
