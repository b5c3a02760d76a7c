/**
 * Per-rank step records stay bounded on long runs and still give what the verdict needs: the same
 * completed step, the slow steps, the median toks/s (to 0.1 %) and the first loss explosion of
 * every record, for a run several windows long.
 */
import { describe, expect, it } from 'vitest';
import { median, type StepRecord } from '../../../src/analysis/step-stats.js';
import { RankSteps, WINDOW, windowFor } from '../../../src/analysis/step-store.js';

const N = 5 * WINDOW + 123;
/** every 997th step is five times as long: the slow ones */
const SLOW_EVERY = 997;
const lossAt = (step: number) => 5.7 + ((step * 31) % 17) * 0.01;

function run(explodeAt: number | null, window = WINDOW) {
  const store = new RankSteps();
  const all = new Map<number, StepRecord>();
  let t = 1000;
  for (let step = 1; step <= N; step++) {
    // jitter, and every 997th step five times as long
    const dur = (0.05 + ((step * 7919) % 13) * 0.001) * (step % SLOW_EVERY === 0 ? 5 : 1);
    const loss = explodeAt === step ? 900 : lossAt(step);
    const toks = 70_000 + ((step * 104729) % 1000);
    const rec = { startTs: t, endTs: t + dur, loss, toksPerS: toks };
    t += dur;
    Object.assign(store.record(step, window), rec);
    all.set(step, { ...rec });
  }
  return { store, all };
}

describe('RankSteps', () => {
  it('keeps at most two windows of records however long the run', () => {
    const { store } = run(null);
    expect(store.recent.size).toBeLessThanOrEqual(2 * WINDOW);
    // the steps before the window were folded
    expect(store.foldedDone).toBeGreaterThanOrEqual(N - 2 * WINDOW);
  });

  it('gives the completed step, slow steps, median toks/s and explosion of the whole run', () => {
    const { store, all } = run(3 * WINDOW);
    expect(store.done()).toBe(N);
    expect(store.completed()).toBe(N);
    const slow = Array.from({ length: Math.floor(N / SLOW_EVERY) }, (_, i) => (i + 1) * SLOW_EVERY);
    const got = store.slow(0);
    expect(got.steps.map((s) => s.step)).toEqual(slow);
    expect(got.count).toBe(slow.length);
    const toks = median([...all.values()].map((r) => r.toksPerS!))!;
    expect(Math.abs(store.medianToks()! - toks) / toks).toBeLessThan(0.001);
    // the median of the 20 losses before it
    const before = Array.from({ length: 20 }, (_, i) => lossAt(3 * WINDOW - 20 + i));
    expect(store.lossExplosion()).toEqual({ step: 3 * WINDOW, loss: 900, baseline: median(before) });
  });

  it('shares one budget among ranks: 512 ranks keep 128 steps each, and still judge the whole run', () => {
    expect(windowFor(1)).toBe(WINDOW);
    expect(windowFor(8)).toBe(WINDOW);
    expect(windowFor(512)).toBe(128);
    expect(windowFor(100_000)).toBe(64);
    const w = windowFor(512);
    const { store, all } = run(3 * WINDOW, w);
    expect(store.recent.size).toBeLessThanOrEqual(2 * w);
    expect(store.done()).toBe(N);
    const slow = Array.from({ length: Math.floor(N / SLOW_EVERY) }, (_, i) => (i + 1) * SLOW_EVERY);
    expect(store.slow(0).steps.map((s) => s.step)).toEqual(slow);
    const toks = median([...all.values()].map((r) => r.toksPerS!))!;
    expect(Math.abs(store.medianToks()! - toks) / toks).toBeLessThan(0.001);
    const before = Array.from({ length: 20 }, (_, i) => lossAt(3 * WINDOW - 20 + i));
    expect(store.lossExplosion()).toEqual({ step: 3 * WINDOW, loss: 900, baseline: median(before) });
  });

  it('is exact while a run fits the window', () => {
    const store = new RankSteps();
    for (let step = 1; step <= 50; step++) {
      const rec = { startTs: step, endTs: step + (step === 20 ? 4 : 0.5), toksPerS: step };
      Object.assign(store.record(step), rec);
    }
    // every step ends 1 s after the one before it (the first 0.5 s after its start), but step 20 4.5 s
    expect(store.slow(0).steps).toEqual([{ rank: 0, step: 20, seconds: 4.5, medianSeconds: 1 }]);
    expect(store.medianToks()).toBe(25.5);
  });
});

describe('median', () => {
  it('sorts few values in place of a comparator sort, many with it, and leaves its input alone', () => {
    const few = [5, 1, 4, 2, 3];
    expect(median(few)).toBe(3);
    expect(few).toEqual([5, 1, 4, 2, 3]);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(median([])).toBeNull();
    const many = Array.from({ length: 41 }, (_, i) => (i * 17) % 41);
    expect(median(many)).toBe(20);
    expect(median([...many, 41])).toBe(20.5);
  });
});
