/**
 * Per-rank step records stay bounded on long runs and still give what the verdict needs: the same
 * completed step, the slow steps, the median toks/s (to 0.1 %) and the first loss explosion as the
 * exact functions over every record, for a run several windows long.
 */
import { describe, expect, it } from 'vitest';
import { firstLossExplosion, median, type StepRecord, slowSteps } from '../../../src/analysis/step-stats.js';
import { RankSteps, WINDOW } from '../../../src/analysis/step-store.js';

const N = 5 * WINDOW + 123;

function run(explodeAt: number | null) {
  const store = new RankSteps();
  const all = new Map<number, StepRecord>();
  let t = 1000;
  for (let step = 1; step <= N; step++) {
    // jitter, and every 997th step five times as long
    const dur = (0.05 + ((step * 7919) % 13) * 0.001) * (step % 997 === 0 ? 5 : 1);
    const loss = explodeAt === step ? 900 : 5.7 + ((step * 31) % 17) * 0.01;
    const toks = 70_000 + ((step * 104729) % 1000);
    const rec = { startTs: t, endTs: t + dur, loss, toksPerS: toks };
    t += dur;
    Object.assign(store.record(step), rec);
    all.set(step, { ...rec });
  }
  return { store, all };
}

describe('RankSteps', () => {
  it('keeps at most two windows of records however long the run', () => {
    const { store } = run(null);
    expect(store.recent.size).toBeLessThanOrEqual(2 * WINDOW);
    expect(store.folded).toBe(true);
  });

  it('gives the completed step, slow steps, median toks/s and explosion of the whole run', () => {
    const { store, all } = run(3 * WINDOW);
    expect(store.done()).toBe(N);
    expect(store.completed()).toBe(N);
    const exact = slowSteps(0, all);
    const got = store.slow(0);
    expect(got.steps.map((s) => s.step)).toEqual(exact.map((s) => s.step));
    expect(got.count).toBe(exact.length);
    const toks = median([...all.values()].map((r) => r.toksPerS!))!;
    expect(Math.abs(store.medianToks()! - toks) / toks).toBeLessThan(0.001);
    expect(store.lossExplosion()).toEqual(firstLossExplosion(all));
    expect(store.lossExplosion()?.step).toBe(3 * WINDOW);
  });

  it('is exact while a run fits the window', () => {
    const store = new RankSteps();
    const all = new Map<number, StepRecord>();
    for (let step = 1; step <= 50; step++) {
      const rec = { startTs: step, endTs: step + (step === 20 ? 4 : 0.5), toksPerS: step };
      Object.assign(store.record(step), rec);
      all.set(step, rec);
    }
    expect(store.slow(0).steps).toEqual(slowSteps(0, all));
    expect(store.medianToks()).toBe(25.5);
  });
});
