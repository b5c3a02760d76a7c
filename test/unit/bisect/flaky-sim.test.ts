/**
 * The flaky bisection against seeded simulations (no processes): 16 changes, one culprit that fails
 * 30 % of the runs it is applied in, 2 % background flakes everywhere. A run then carries at most
 * ~0.13 bit about the culprit, so ~30 runs is the floor for any method; the search must name the
 * right culprit first within 60 runs in ≥ 90 % of 200 bisections, with a median under 45 runs, and
 * the posterior it claims must be calibrated. A pair that fails only together is found as the pair,
 * and a deterministic failure costs what delta debugging costs.
 */
import { describe, expect, it } from 'vitest';
import { flakySearch, type Oracle } from '../../../src/bisect/search.js';
import { mulberry32 } from '../../helpers/seeded-random.js';

/** every simulation is seeded, so a failure reproduces */
const rng = mulberry32;

/** a world where `culprit` (all of it applied) fails a run with probability `theta`, any run with `eps` */
function world(culprit: number[], theta: number, eps: number, random: () => number): Oracle<null> {
  return async (subset, _attempt, mayRun) => {
    if (!mayRun) return null;
    const applied = culprit.every((c) => subset.includes(c));
    const fail = random() < eps || (applied && random() < theta);
    return { outcome: fail ? 'fail' : 'pass', ran: true, detail: null };
  };
}

describe('flaky bisection, simulated', () => {
  it('16 changes, a 30 % culprit, 2 % background: right first in ≥ 90 % of 200 seeds within 60 runs', async () => {
    const right: boolean[] = [];
    const runs: number[] = [];
    const claims: Array<{ right: boolean }> = [];
    for (let seed = 1; seed <= 200; seed++) {
      const random = rng(seed);
      const culprit = Math.floor(random() * 16);
      const r = await flakySearch(16, world([culprit], 0.3, 0.02, random), { maxRuns: 60 });
      const ok = r.minimal.length === 1 && r.minimal[0] === culprit;
      right.push(ok);
      runs.push(r.runs);
      if (r.proven) claims.push({ right: ok });
      expect(r.runs).toBeLessThanOrEqual(60);
    }
    const sorted = [...runs].sort((a, b) => a - b);
    const median = (sorted[99]! + sorted[100]!) / 2;
    const rightShare = right.filter(Boolean).length / right.length;
    const calibrated = claims.filter((c) => c.right).length / claims.length;
    console.log(
      `flaky sim: ${(rightShare * 100).toFixed(1)} % right, median ${median} runs, ${claims.length} claims ≥ 0.95 of which ${(calibrated * 100).toFixed(1)} % right`,
    );
    expect(rightShare).toBeGreaterThanOrEqual(0.9);
    expect(median).toBeLessThan(45);
    expect(calibrated).toBeGreaterThanOrEqual(0.95);
  }, 300_000);

  it('a pair that fails only together (50 %) is found as the pair', async () => {
    let named = 0;
    const claims: boolean[] = [];
    for (let seed = 1; seed <= 20; seed++) {
      const random = rng(seed);
      const a = Math.floor(random() * 16);
      const b = (a + 1 + Math.floor(random() * 15)) % 16;
      const pair = [a, b].sort((x, y) => x - y);
      const r = await flakySearch(16, world(pair, 0.5, 0.02, random), { maxRuns: 120 });
      if (r.minimal.join() === pair.join()) named++;
      if (r.proven) claims.push(r.minimal.join() === pair.join());
    }
    console.log(
      `pair sim: ${named} of 20 named first, ${claims.filter(Boolean).length} of ${claims.length} claims right`,
    );
    expect(named).toBeGreaterThanOrEqual(17);
    expect(claims.filter(Boolean).length).toBeGreaterThanOrEqual(Math.ceil(claims.length * 0.9));
  }, 120_000);

  it('a deterministic failure costs what delta debugging costs: the demo’s four changes in ≤ 5 runs', async () => {
    // a draw of 0: every run with the culprit fails, none without it
    const four = await flakySearch(
      4,
      world([2], 1, 0, () => 0),
    );
    expect(four).toMatchObject({ status: 'found', minimal: [2], proven: true });
    expect(four.runs).toBeLessThanOrEqual(5);
    // every configuration ran once: nothing deterministic is repeated
    expect(four.trials.every((t) => t.observations.length === 1)).toBe(true);
    expect(four.failureRate.culprit).toBeGreaterThan(0.9);
    const sixteen = await flakySearch(
      16,
      world([9], 1, 0, () => 0),
    );
    expect(sixteen).toMatchObject({ status: 'found', minimal: [9] });
    // ddmin: the endpoints and two tests per halving
    expect(sixteen.runs).toBeLessThanOrEqual(2 + 2 * 4);
    const pair = await flakySearch(
      8,
      world([1, 6], 1, 0, () => 0),
    );
    expect(pair).toMatchObject({ status: 'found', minimal: [1, 6] });
  });

  it('a budget spent below the confidence is uncertain, with the best guess and the rates', async () => {
    const r = await flakySearch(16, world([5], 0.3, 0.02, rng(7)), { maxRuns: 12 });
    expect(r.status).toBe('uncertain');
    expect(r.proven).toBe(false);
    expect(r.runs).toBe(12);
    expect(r.culprits[0]!.posterior).toBeLessThan(0.95);
    expect(r.minimal).toEqual(r.culprits[0]!.changes);
  });

  it('the bad side is tried a quarter of the budget before it counts as not reproduced', async () => {
    let runs = 0;
    const never: Oracle<null> = async (_s, _a, mayRun) => {
      if (!mayRun) return null;
      runs++;
      return { outcome: 'pass', ran: true, detail: null };
    };
    for (const [maxRuns, tries] of [
      [60, 15],
      [200, 50],
      [3, 1],
    ] as const) {
      runs = 0;
      const r = await flakySearch(16, never, { maxRuns });
      expect(r.status).toBe('not-reproduced');
      expect(runs, `--max-runs ${maxRuns}`).toBe(tries);
    }
  });

  it('runs whose process did not see the change are kept in the record and are no evidence', async () => {
    // change 3 is the culprit, but every run that applies it is reported as not applied
    const oracle: Oracle<null> = async (subset, _a, mayRun) => {
      if (!mayRun) return null;
      const applied = !subset.includes(3);
      return { outcome: subset.includes(3) ? 'fail' : 'pass', ran: true, applied, detail: null };
    };
    const r = await flakySearch(4, oracle, { maxRuns: 20 });
    expect(r.status).toBe('not-reproduced');
    expect(r.trials[0]!.observations.every((x) => x.applied === false)).toBe(true);
  });
});
