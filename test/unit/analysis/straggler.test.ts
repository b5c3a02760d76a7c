import { describe, expect, it } from 'vitest';
import {
  binomialLowerTail,
  type RankSampleCounts,
  rankStragglers,
  stragglerText,
} from '../../../src/analysis/straggler.js';
import { mulberry32 } from '../../helpers/seeded-random.js';

const rng = mulberry32;

describe('binomialLowerTail', () => {
  it('matches the exact binomial', () => {
    expect(binomialLowerTail(0, 10, 0.1)).toBeCloseTo(0.9 ** 10, 10);
    // P(X ≤ 1), n = 5, p = 0.5: (1 + 5) / 32
    expect(binomialLowerTail(1, 5, 0.5)).toBeCloseTo(6 / 32, 10);
    expect(binomialLowerTail(5, 5, 0.3)).toBe(1);
  });
});

describe('rankStragglers', () => {
  it('scores every sampled rank 1 − waitShare and names the one that never waits', () => {
    const counts: RankSampleCounts[] = [0, 1, 2, 3].map((rank) => ({
      rank,
      node: 'a',
      samples: 100,
      waiting: rank === 2 ? 0 : 30,
    }));
    counts.push({ rank: 4, node: 'a', samples: 0, waiting: 0 });
    const out = rankStragglers(counts);
    expect(out.map((r) => r.rank)).toEqual([0, 1, 2, 3]);
    expect(out[0]).toMatchObject({ score: 0.7, waitShare: 0.3, samples: 100, named: false, confidence: 0 });
    expect(out[2]).toMatchObject({ rank: 2, score: 1, waitShare: 0, named: true });
    expect(out[2]!.confidence).toBeGreaterThan(0.999);
    expect(stragglerText(out)).toMatch(/^straggler: rank 2 \(a\), score 1\.00/);
  });

  it('names nobody on thin evidence, on one rank, or when nobody waits', () => {
    const thin = rankStragglers([
      { rank: 0, node: null, samples: 10, waiting: 0 },
      { rank: 1, node: null, samples: 10, waiting: 5 },
      { rank: 2, node: null, samples: 10, waiting: 5 },
    ]);
    expect(thin.some((r) => r.named)).toBe(false);
    expect(rankStragglers([{ rank: 0, node: null, samples: 500, waiting: 0 }])[0]!.named).toBe(false);
    const idle = rankStragglers([0, 1, 2].map((rank) => ({ rank, node: null, samples: 200, waiting: 0 })));
    expect(idle.some((r) => r.named)).toBe(false);
    expect(stragglerText(idle)).toMatch(/^no straggler/);
  });

  /**
   * Steps of a synchronous run: each rank computes ~0.5 s (±4 % noise, `extra` more for rank 5),
   * then all meet in an all_reduce of `reduceS` (every rank waits in it, the straggler too);
   * `perStep` rounds of every rank at random moments of each step (all ranks at once), each
   * waiting when it falls after the rank's own compute. A round with one rank alone not waiting
   * counts for that rank's `lone`.
   */
  function steps(
    seed: number,
    nSteps: number,
    perStep: number,
    extra: number,
    reduceS = 0.005,
  ): RankSampleCounts[] {
    const u = rng(seed);
    const gauss = () => Math.sqrt(-2 * Math.log(u() + 1e-12)) * Math.cos(2 * Math.PI * u());
    const counts = Array.from({ length: 8 }, (_, rank) => ({
      rank,
      node: null,
      samples: 0,
      waiting: 0,
      lone: 0,
    }));
    for (let s = 0; s < nSteps; s++) {
      const c = counts.map((_, r) => 0.5 * (1 + 0.04 * gauss()) + (r === 5 ? extra : 0));
      const step = Math.max(...c) + reduceS;
      for (let k = 0; k < perStep; k++) {
        const t = u() * step;
        const notWaiting = counts.filter((x) => t <= c[x.rank]!);
        for (const x of counts) {
          x.samples++;
          if (t > c[x.rank]!) x.waiting++;
        }
        if (notWaiting.length === 1) notWaiting[0]!.lone++;
      }
    }
    return counts;
  }

  it('names a rank doing 10 % more work within 20 steps (6 samples a step) in ≥ 95 of 100 runs', () => {
    let right = 0;
    let wrong = 0;
    for (let seed = 1; seed <= 100; seed++) {
      const named = rankStragglers(steps(seed, 20, 6, 0.05)).filter((r) => r.named);
      if (named.length === 1 && named[0]!.rank === 5) right++;
      else if (named.length > 0) wrong++;
    }
    expect(wrong).toBe(0);
    expect(right).toBeGreaterThanOrEqual(95);
  });

  it('names it more often with the lone rounds where the all_reduce itself takes a share of every step (a busy box)', () => {
    let right = 0;
    let shareOnly = 0;
    for (let seed = 1; seed <= 100; seed++) {
      const c = steps(seed, 20, 6, 0.05, 0.04);
      const named = rankStragglers(c).filter((r) => r.named);
      if (named.length === 1 && named[0]!.rank === 5) right++;
      // without the lone rounds (the share test alone) it is named far less often
      if (rankStragglers(c.map((x) => ({ ...x, lone: 0 }))).some((r) => r.named && r.rank === 5)) shareOnly++;
    }
    console.log(`busy box: named ${right}/100, by the share test alone ${shareOnly}/100`);
    expect(right).toBeGreaterThanOrEqual(80);
    expect(shareOnly).toBeLessThan(right);
  });

  it('names nobody when all ranks do the same work, in ≥ 97 of 100 runs, short or long', () => {
    let falseNamed = 0;
    for (let seed = 1; seed <= 100; seed++) {
      if (rankStragglers(steps(seed, 20, 6, 0)).some((r) => r.named)) falseNamed++;
      if (rankStragglers(steps(1000 + seed, 200, 6, 0, 0.04)).some((r) => r.named)) falseNamed++;
    }
    expect(falseNamed).toBeLessThanOrEqual(6);
  });

  it('does not name a rank that waits a little less than the others, however many samples', () => {
    const counts = [0, 1, 2, 3].map((rank) => ({
      rank,
      node: null,
      samples: 100_000,
      waiting: rank === 0 ? 8_000 : 10_000,
    }));
    const out = rankStragglers(counts);
    expect(out[0]!.confidence).toBeGreaterThan(0.99);
    expect(out[0]!.named).toBe(false);
  });
});
