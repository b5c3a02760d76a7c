/**
 * A tracker's record times: the newest `limit` kept in a ring, read back in order across its wrap,
 * and a limit that changes (a rank that gains a second source keeps more) keeps the newest.
 */
import { describe, expect, it } from 'vitest';
import { RecordTimes } from '../../../src/analysis/record-times.js';

/** an array model of the same rule: push, then drop the oldest past the limit */
function model(ops: Array<[t: number, pos: number, limit: number]>) {
  const kept: Array<[number, number]> = [];
  for (const [t, pos, limit] of ops) {
    kept.push([t, pos]);
    while (kept.length > limit) kept.shift();
  }
  return kept;
}

describe('RecordTimes', () => {
  it('answers as an array that drops its oldest would, across wraps and changes of limit', () => {
    const ops: Array<[number, number, number]> = [];
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 5000; i++) {
      const limit = i < 1000 ? 64 : i < 3000 ? 700 : i < 4000 ? 100 : 512;
      ops.push([1000 + i * 0.5, i * 3 + (i % 3), limit]);
    }
    const times = new RecordTimes();
    for (let i = 0; i < ops.length; i++) {
      const [t, pos, limit] = ops[i]!;
      times.push(t, pos, limit);
      const kept = model(ops.slice(0, i + 1));
      expect(times.size).toBe(kept.length);
      if (i % 97 !== 0) continue;
      const from = kept[0]![0] - 1 + rnd() * (t - kept[0]![0]);
      const to = from + rnd() * 200;
      const position = kept[Math.floor(rnd() * kept.length)]![1];
      const want = kept.filter(([kt, kp]) => kt > from && kt < to && kp > position).map(([kt]) => kt);
      expect(times.between(from, to, position)).toEqual(want);
    }
  });

  it('keeps nothing under a limit of 0, and an empty ring answers nothing', () => {
    const times = new RecordTimes();
    expect(times.between(0, 10, -1)).toEqual([]);
    times.push(1, 1, 0);
    expect(times.size).toBe(0);
  });
});
