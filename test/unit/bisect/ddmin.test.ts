import { describe, expect, it } from 'vitest';
import { ddmin, type Observation, type Oracle, type Outcome, split } from '../../../src/bisect/ddmin.js';

/** an oracle from a rule over the applied subset; it records what it was asked */
function oracleOf(rule: (s: ReadonlySet<number>, attempt: number) => Outcome) {
  const asked: string[] = [];
  const oracle: Oracle<string> = async (subset, attempt, mayRun) => {
    // no cache here: once the budget is spent there is no answer
    if (!mayRun) return null;
    asked.push(`${subset.join(',')}#${attempt}`);
    const outcome = rule(new Set(subset), attempt);
    return { outcome, ran: true, detail: `[${subset.join(',')}]` };
  };
  return { oracle, asked };
}

describe('split', () => {
  it('makes n nearly equal consecutive parts, never empty ones', () => {
    expect(split([0, 1, 2, 3, 4], 2)).toEqual([
      [0, 1],
      [2, 3, 4],
    ]);
    expect(split([0, 1, 2], 3)).toEqual([[0], [1], [2]]);
    expect(split([0, 1], 4)).toEqual([[0], [1]]);
  });
});

describe('ddmin', () => {
  it('single cause: finds the one change among eight, proven 1-minimal, in few trials', async () => {
    const { oracle } = oracleOf((s) => (s.has(5) ? 'fail' : 'pass'));
    const r = await ddmin(8, oracle);
    expect(r.status).toBe('found');
    expect(r.minimal).toEqual([5]);
    expect(r.proven).toBe(true);
    // endpoints + a halving per level: log2(8) levels of at most two tests
    expect(r.trials.length).toBeLessThanOrEqual(2 + 2 * 3);
    expect(r.trials[0]).toMatchObject({ subset: [0, 1, 2, 3, 4, 5, 6, 7], outcome: 'fail' });
    expect(r.trials[1]).toMatchObject({ subset: [], outcome: 'pass' });
    expect(r.runs).toBe(r.trials.length);
  });

  it('two-change interaction: neither alone fails, both are kept', async () => {
    const { oracle } = oracleOf((s) => (s.has(1) && s.has(6) ? 'fail' : 'pass'));
    const r = await ddmin(8, oracle);
    expect(r.status).toBe('found');
    expect(r.minimal).toEqual([1, 6]);
    expect(r.proven).toBe(true);
    // 1-minimal: each single one was tried on its own and passed
    const outcomeOf = (sub: number[]) => r.trials.find((t) => t.subset.join() === sub.join())?.outcome;
    expect(outcomeOf([1])).toBe('pass');
    expect(outcomeOf([6])).toBe('pass');
  });

  it('three-way interaction is reduced to exactly the three', async () => {
    const { oracle } = oracleOf((s) => (s.has(0) && s.has(3) && s.has(4) ? 'fail' : 'pass'));
    const r = await ddmin(6, oracle);
    expect(r.minimal).toEqual([0, 3, 4]);
    expect(r.proven).toBe(true);
  });

  it('no cause: the changes do not reproduce the failure on the good side', async () => {
    const { oracle, asked } = oracleOf(() => 'pass');
    const r = await ddmin(4, oracle);
    expect(r.status).toBe('not-reproduced');
    expect(r.minimal).toEqual([]);
    expect(r.proven).toBe(false);
    expect(asked).toEqual(['0,1,2,3#0']);
  });

  it('a good side that fails is refused before any search', async () => {
    const { oracle } = oracleOf(() => 'fail');
    const r = await ddmin(4, oracle);
    expect(r.status).toBe('good-fails');
    expect(r.trials).toHaveLength(2);
  });

  it('another failure class is unresolved: never taken for the failure searched', async () => {
    // change 2 alone crashes (unresolved), 2 with 3 hangs (fail)
    const { oracle } = oracleOf((s) => (s.has(2) && s.has(3) ? 'fail' : s.has(2) ? 'unresolved' : 'pass'));
    const r = await ddmin(4, oracle);
    expect(r.minimal).toEqual([2, 3]);
    expect(r.proven).toBe(true);
  });

  it('flaky: repeats that disagree are reported as flaky, never voted into a failure', async () => {
    // change 0 is the cause; {1} fails only on its first attempt
    const { oracle } = oracleOf((s, attempt) =>
      s.has(0) ? 'fail' : s.size === 1 && s.has(1) && attempt === 0 ? 'fail' : 'pass',
    );
    const r = await ddmin(4, oracle, { repeat: 3 });
    expect(r.minimal).toEqual([0]);
    expect(r.proven).toBe(true);
    const flaky = r.trials.filter((t) => t.outcome === 'flaky');
    expect(flaky.map((t) => t.subset)).toEqual(r.flaky.map((i) => r.trials[i]!.subset));
    for (const t of flaky) expect(t.observations.map((o) => o.outcome)).toContain('pass');
    // every configuration was tried three times
    for (const t of r.trials) expect(t.observations).toHaveLength(3);
  });

  it('flaky on the way leaves the result unproven when it could have been smaller', async () => {
    // {0,1} is needed, but {1} alone fails on one of two attempts
    const { oracle } = oracleOf((s, attempt) =>
      s.has(0) && s.has(1) ? 'fail' : s.size === 1 && s.has(1) && attempt === 1 ? 'fail' : 'pass',
    );
    const r = await ddmin(2, oracle, { repeat: 2 });
    expect(r.minimal).toEqual([0, 1]);
    expect(r.proven).toBe(false);
    expect(r.flaky).toHaveLength(1);
  });

  it('budget: stops with the best so far, unproven; cache hits are free', async () => {
    const { oracle } = oracleOf((s) => (s.has(7) ? 'fail' : 'pass'));
    // all, ∅, {0..3} passes, {4..7} fails, then the budget is spent
    const r = await ddmin(8, oracle, { budget: 4 });
    expect(r.runs).toBe(4);
    expect(r.status).toBe('found');
    expect(r.proven).toBe(false);
    expect(r.minimal).toEqual([4, 5, 6, 7]);

    // the same search with every answer cached runs nothing and still finishes
    const cached: Oracle<string> = async (subset, _a, mayRun) => {
      expect(mayRun).toBe(false);
      return { outcome: subset.includes(7) ? 'fail' : 'pass', ran: false, detail: '' } as Observation<string>;
    };
    const all = await ddmin(8, cached, { budget: 0 });
    expect(all.runs).toBe(0);
    expect(all.minimal).toEqual([7]);
    expect(all.proven).toBe(true);
  });

  it('a budget spent before the endpoints are known says so', async () => {
    const { oracle } = oracleOf((s) => (s.has(0) ? 'fail' : 'pass'));
    const r = await ddmin(3, oracle, { budget: 1 });
    expect(r.status).toBe('budget');
    expect(r.trials).toHaveLength(1);
  });

  it('never asks for the same configuration twice', async () => {
    const { oracle, asked } = oracleOf((s) => (s.has(2) && s.has(9) ? 'fail' : 'pass'));
    await ddmin(12, oracle);
    expect(new Set(asked).size).toBe(asked.length);
  });
});
