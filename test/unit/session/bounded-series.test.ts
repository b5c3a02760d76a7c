/**
 * The live model's series and log stay bounded on runs of any length: a chart keeps at most about
 * a thousand points (the newest exactly) and counts every step; the log ring keeps the newest lines.
 */
import { describe, expect, it } from 'vitest';
import { Series } from '../../../src/analysis/chart-series.js';
import { LogRing } from '../../../src/session/log-ring.js';

describe('Series', () => {
  it('keeps every point of a short run, in step order: of one priority the first value, a higher one replaces', () => {
    const s = new Series();
    for (const step of [1, 3, 2, 4]) s.set(step, step * 10, 1);
    s.set(2, 99, 1);
    s.set(3, 33, 2);
    s.set(3, 77, 0);
    expect(s.points()).toEqual([
      { step: 1, value: 10 },
      { step: 2, value: 20 },
      { step: 3, value: 33 },
      { step: 4, value: 40 },
    ]);
    expect(s.total).toBe(4);
  });

  it('decimates a million steps to at most 1024 + 128 points, the newest steps exact', () => {
    const s = new Series();
    for (let step = 1; step <= 1_000_000; step++) s.set(step, step, 0);
    const p = s.points();
    expect(s.total).toBe(1_000_000);
    expect(p.length).toBeLessThanOrEqual(1024 + 128);
    expect(p.length).toBeGreaterThan(500);
    expect(p[0]).toEqual({ step: 1, value: 1 });
    expect(p.at(-1)).toEqual({ step: 1_000_000, value: 1_000_000 });
    expect(p.slice(-64).map((x) => x.step)).toEqual(Array.from({ length: 64 }, (_, i) => 999_937 + i));
    for (let i = 1; i < p.length; i++) expect(p[i]!.step).toBeGreaterThan(p[i - 1]!.step);
  });

  it('returns the same array until something changes (charts are memoised on it)', () => {
    const s = new Series();
    s.set(1, 1, 0);
    const a = s.points();
    expect(s.points()).toBe(a);
    s.set(2, 2, 0);
    expect(s.points()).not.toBe(a);
  });
});

describe('LogRing', () => {
  it('keeps the newest lines with their ids, oldest first', () => {
    const r = new LogRing(3);
    for (const t of ['a', 'b', 'c', 'd', 'e']) r.push(t);
    expect(r.total).toBe(5);
    expect(r.tail(10)).toEqual([
      { id: 3, text: 'c' },
      { id: 4, text: 'd' },
      { id: 5, text: 'e' },
    ]);
    expect(r.tail(2).map((l) => l.text)).toEqual(['d', 'e']);
  });
});
