/**
 * Delta debugging (Zeller's ddmin) over a set of changes, with the oracle injected: pure apart from
 * awaiting it, so the search can be tested with a table and run for real with trainer runs.
 *
 * A configuration is a subset of the change indices, applied to the good side. The oracle says
 * `fail` (the bad side's failure, reproduced), `pass` (behaves like the good side) or `unresolved`
 * (something else: another failure class, an incomplete run). Repeats of one configuration that
 * disagree make it `flaky`: it is reported, and never taken as a failure, so a flaky trial can only
 * make the result larger, never wrong.
 */

export type Outcome = 'fail' | 'pass' | 'unresolved';

export interface Observation<D> {
  outcome: Outcome;
  /** false when the answer came from a cache: it costs nothing against the budget */
  ran: boolean;
  detail: D;
}

/**
 * One attempt at a configuration. `mayRun` is false once the budget is spent: answer from a cache
 * then, or null to stop the search.
 */
export type Oracle<D> = (
  subset: readonly number[],
  attempt: number,
  mayRun: boolean,
) => Promise<Observation<D> | null>;

export interface Trial<D> {
  /** 0-based, in the order tested */
  index: number;
  subset: number[];
  /** one per repeat */
  observations: Array<Observation<D>>;
  outcome: Outcome | 'flaky';
}

export type DdminStatus =
  /** a 1-minimal failing subset (proven when the search finished) */
  | 'found'
  /** the good side does not pass: nothing to bisect against */
  | 'good-fails'
  /** all the changes applied to the good side do not reproduce the failure */
  | 'not-reproduced'
  /** the budget ran out before even the endpoints were known */
  | 'budget';

export interface DdminResult<D> {
  status: DdminStatus;
  /** the smallest subset known to fail (the full set when nothing smaller was found) */
  minimal: number[];
  /** true when `minimal` is 1-minimal: removing any one change makes it stop failing */
  proven: boolean;
  trials: Array<Trial<D>>;
  /** trials (by index) whose repeats disagreed */
  flaky: number[];
  /** runs made (cache hits excluded) */
  runs: number;
}

export interface DdminOptions {
  /** most runs (cache hits are free); default unlimited */
  budget?: number;
  /** attempts per configuration (≥ 1) */
  repeat?: number;
}

class BudgetSpent extends Error {}

/** a subset's key: its indices sorted, comma-separated */
export const subsetKey = (s: readonly number[]) => [...s].sort((a, b) => a - b).join(',');

/** split `c` into `n` nearly equal consecutive parts */
export function split<T>(c: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  let start = 0;
  for (let i = 0; i < n; i++) {
    const end = start + Math.floor((c.length - start) / (n - i));
    out.push(c.slice(start, end));
    start = end;
  }
  return out.filter((p) => p.length > 0);
}

export async function ddmin<D>(
  size: number,
  oracle: Oracle<D>,
  o: DdminOptions = {},
): Promise<DdminResult<D>> {
  const repeat = Math.max(1, Math.floor(o.repeat ?? 1));
  const budget = o.budget ?? Number.POSITIVE_INFINITY;
  const trials: Array<Trial<D>> = [];
  const seen = new Map<string, Trial<D>>();
  let runs = 0;

  const test = async (subset: readonly number[]): Promise<Outcome | 'flaky'> => {
    const k = subsetKey(subset);
    const known = seen.get(k);
    if (known) return known.outcome;
    const observations: Array<Observation<D>> = [];
    for (let attempt = 0; attempt < repeat; attempt++) {
      const obs = await oracle(subset, attempt, runs < budget);
      if (!obs) {
        // a partial trial is still evidence: keep what the repeats said so far
        if (observations.length) record(subset, observations);
        throw new BudgetSpent();
      }
      if (obs.ran) runs++;
      observations.push(obs);
    }
    return record(subset, observations).outcome;
  };
  const record = (subset: readonly number[], observations: Array<Observation<D>>): Trial<D> => {
    const kinds = new Set(observations.map((x) => x.outcome));
    const t: Trial<D> = {
      index: trials.length,
      subset: [...subset].sort((a, b) => a - b),
      observations,
      outcome: kinds.size === 1 ? observations[0]!.outcome : 'flaky',
    };
    trials.push(t);
    seen.set(subsetKey(subset), t);
    return t;
  };
  const all = Array.from({ length: size }, (_, i) => i);
  const result = (status: DdminStatus, minimal: number[], proven: boolean): DdminResult<D> => ({
    status,
    minimal,
    proven,
    trials,
    flaky: trials.filter((t) => t.outcome === 'flaky').map((t) => t.index),
    runs,
  });

  // the endpoints: the bad side's changes must fail on the good side (asked first: its failure is
  // what the oracle learns to look for), and the good side must pass
  try {
    if ((await test(all)) !== 'fail') return result('not-reproduced', [], false);
    if ((await test([])) !== 'pass') return result('good-fails', [], false);
  } catch (e) {
    if (e instanceof BudgetSpent) return result('budget', [], false);
    throw e;
  }

  let c = all;
  let n = 2;
  try {
    while (c.length >= 2) {
      const parts = split(c, Math.min(n, c.length));
      let reduced = false;
      for (const p of parts)
        if ((await test(p)) === 'fail') {
          c = p;
          n = 2;
          reduced = true;
          break;
        }
      // with two parts the complements are the parts themselves
      if (!reduced && parts.length > 2)
        for (const p of parts) {
          const complement = c.filter((x) => !p.includes(x));
          if ((await test(complement)) === 'fail') {
            c = complement;
            n = Math.max(n - 1, 2);
            reduced = true;
            break;
          }
        }
      if (reduced) continue;
      if (n >= c.length) break;
      n = Math.min(c.length, n * 2);
    }
  } catch (e) {
    if (e instanceof BudgetSpent) return result('found', c, false);
    throw e;
  }
  // ending at granularity |c| means every one-smaller subset was tried and did not fail; one that
  // was flaky might have failed, so it leaves the result unproven
  const inC = (t: Trial<D>) => t.subset.length === c.length - 1 && t.subset.every((x) => c.includes(x));
  return result('found', c, !trials.some((t) => t.outcome === 'flaky' && inC(t)));
}
