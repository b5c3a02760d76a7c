import { describe, expect, it } from 'vitest';
import { abCompare, abText, t975 } from '../../../src/analysis/ab-compare.js';
import { mulberry32 } from '../../helpers/seeded-random.js';

/** normal draws from a seeded uniform generator */
function rng(seed: number) {
  const u = mulberry32(seed);
  return () => Math.sqrt(-2 * Math.log(u() + 1e-12)) * Math.cos(2 * Math.PI * u());
}

/** step times around `mean` with relative noise `sd`, AR(1) with correlation rho, and a slow warm-up */
function steps(n: number, mean: number, sd: number, rho: number, seed: number): Array<[number, number]> {
  const z = rng(seed);
  let e = 0;
  return Array.from({ length: n }, (_, i) => {
    e = rho * e + Math.sqrt(1 - rho * rho) * z();
    const warm = i < 3 ? 3 : 1;
    return [i + 1, mean * warm * (1 + sd * e)];
  });
}

describe('A/B with a confidence interval', () => {
  it('two runs 3 % apart with step-time noise: the interval excludes 0 and contains 3 %', () => {
    const s = abCompare(steps(400, 0.1, 0.05, 0.5, 1), steps(400, 0.103, 0.05, 0.5, 2), 'step time')!;
    expect(s.resolved).toBe(true);
    expect(s.lo).toBeGreaterThan(0);
    expect(s.lo).toBeLessThanOrEqual(0.03);
    expect(s.hi).toBeGreaterThanOrEqual(0.03);
    expect(abText(s)).toMatch(
      /^step time: B 3\.\d % longer than A \(95 % CI \d\.\d–\d\.\d %, 360\/360 steps\)$/,
    );
  });

  it('the same configuration twice: the interval contains 0, and it says so with the steps that would tell', () => {
    const s = abCompare(steps(200, 0.1, 0.05, 0.5, 3), steps(200, 0.1, 0.05, 0.5, 4), 'toks/s')!;
    expect(s.resolved).toBe(false);
    expect(s.lo).toBeLessThan(0);
    expect(s.hi).toBeGreaterThan(0);
    expect(abText(s)).toMatch(/^toks\/s: no difference detectable at ±\d\.\d %/);
  });

  it('correlated steps: the 95 % interval holds the true difference in about 95 % of runs', () => {
    let covered = 0;
    let naive = 0;
    const N = 300;
    for (let seed = 0; seed < N; seed++) {
      const a = steps(150, 0.1, 0.05, 0.7, 10 + 2 * seed);
      const b = steps(150, 0.102, 0.05, 0.7, 11 + 2 * seed);
      const s = abCompare(a, b, 'step time')!;
      if (s.lo <= 0.02 && 0.02 <= s.hi) covered++;
      // without the autocorrelation allowance the interval is about 2.4× too narrow
      const mid = (s.lo + s.hi) / 2;
      const half = ((s.hi - s.lo) / 2) * Math.sqrt((1 - 0.7) / (1 + 0.7));
      if (mid - half <= 0.02 && 0.02 <= mid + half) naive++;
    }
    expect(covered / N).toBeGreaterThan(0.9);
    expect(naive / N).toBeLessThan(0.75);
  });

  it('too few steps after warm-up: no statement', () => {
    expect(abCompare(steps(9, 0.1, 0.05, 0, 1), steps(100, 0.1, 0.05, 0, 2), 'step time')).toBeNull();
  });

  it("Student's t at 97.5 %", () => {
    expect(t975(5)).toBeCloseTo(2.571, 1);
    expect(t975(30)).toBeCloseTo(2.042, 2);
    expect(t975(1e6)).toBeCloseTo(1.96, 2);
  });
});
