import { describe, expect, it } from 'vitest';
import { Evidence } from '../../../src/analysis/evidence.js';
import { manyRanksOf } from '../../../src/analysis/rank-table.js';
import type { BeatEvent } from '../../../src/ingest/events.js';

const T0 = 1795364230;
const beat = (rank: number, step: number, ts: number, msg: string, toksPerS?: number): BeatEvent => ({
  kind: 'beat',
  rank,
  step,
  ts,
  msg,
  pid: 100 + rank,
  ...(msg === 'progress' ? { loss: 0.1, toksPerS } : {}),
  extra: {},
});

/** ranks 0–1 take 1 s a step, rank 2 takes 3 s and is two steps behind at the end */
function evidence(): Evidence {
  const e = new Evidence();
  for (const rank of [0, 1, 2]) {
    e.addEvent(beat(rank, 0, T0, 'boot'));
    const dt = rank === 2 ? 3 : 1;
    const steps = rank === 2 ? 4 : 6;
    for (let s = 1; s <= steps; s++) {
      e.addEvent(beat(rank, s, T0 + (s - 1) * dt, 'beat'));
      e.addEvent(beat(rank, s, T0 + s * dt, 'progress', 1000 / dt));
    }
  }
  e.addEvent({ kind: 'proc', ts: T0 + 10, rank: 2, pid: 102, state: 'R', cpuPct: 50 });
  e.addEvent({ kind: 'proc', ts: T0 + 12, rank: 2, pid: 102, state: 'D', cpuPct: 97.5 });
  return e;
}

const STEPS = [
  { rank: 0, step: 6 },
  { rank: 1, step: 6 },
  { rank: 2, step: 4 },
];

describe('rankRows', () => {
  it('gives each rank its step, lag, step time, toks/s, straggler score and newest probe', () => {
    const rows = evidence().rankRows(STEPS);
    expect(rows[0]).toEqual({
      rank: 0,
      step: 6,
      lag: 0,
      stepTimeS: 1,
      toksPerS: 1000,
      straggler: 1,
      score: null,
      namedStraggler: false,
      procState: null,
      cpuPct: null,
    });
    expect(rows[2]).toMatchObject({ rank: 2, lag: 2, stepTimeS: 3, procState: 'D', cpuPct: 97.5 });
    expect(rows[2]!.toksPerS).toBeCloseTo(333.33, 1);
    // 3 s against the ranks' median of 1 s
    expect(rows[2]!.straggler).toBe(3);
  });

  it('scores a rank that trails by at least its lag even when its step time is on par', () => {
    const rows = evidence().rankRows([
      { rank: 0, step: 6 },
      { rank: 1, step: 2 },
    ]);
    expect(rows[1]).toMatchObject({ lag: 4, straggler: 5 });
  });
});

describe('manyRanksOf (after the end)', () => {
  it('takes the verdict’s hang culprit, else its crashing rank', () => {
    const rows = evidence().rankRows(STEPS);
    const stall = {
      rank: 2,
      step: 5,
      where: 'in-step' as const,
      rootCause: { rank: 2, why: 'stopped (T)', waiting: [0, 1] },
    };
    expect(manyRanksOf(rows, { stall, crash: null, stackDiff: null }).rootCause).toEqual({
      rank: 2,
      why: 'stopped (T)',
    });
    const crash = { rank: 1, exception: 'RuntimeError', message: 'boom' } as never;
    expect(manyRanksOf(rows, { stall: null, crash, stackDiff: null }).rootCause).toEqual({
      rank: 1,
      why: 'RuntimeError: boom',
    });
    expect(manyRanksOf(rows, { stall: null, crash: null, stackDiff: null }).rootCause).toBeNull();
  });
});
