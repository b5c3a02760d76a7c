/**
 * A bisection that trusts no single run: the changes are searched with a posterior over which one
 * (or which pair) makes the failure (src/bisect/posterior.ts), each next trial the one expected to
 * tell the most (src/bisect/next-trial.ts), until one candidate is as likely as `confidence` asks or
 * the run budget is spent. The oracle is injected, so the search is tested with seeded simulations
 * in milliseconds and run for real with trainer runs.
 *
 * A configuration is a subset of the change indices, applied to the good side. The oracle says
 * `fail` (the bad side's failure), `pass` (like the good side) or `unresolved` (something else: another
 * failure class, an incomplete run); a run whose process did not see the configuration it was meant
 * to test (`applied: false`) is kept in the record and taken as no evidence at all.
 */

import type { Outcome, Posterior as PosteriorRecord, SearchStatus } from '../notebook/bisection-record.js';
import { nextTrial } from './next-trial.js';
import { Posterior } from './posterior.js';

export interface Observation<D> {
  outcome: Outcome;
  /** false when the answer came from a cache: it costs nothing against the budget */
  ran: boolean;
  /** false when the run's process did not see the intended changes: not evidence */
  applied?: boolean;
  detail: D;
}

/**
 * One run of a configuration; `attempt` counts its earlier runs in this search. `mayRun` is false
 * once the budget is spent: answer from a cache then, or null to stop the search.
 */
export type Oracle<D> = (
  subset: readonly number[],
  attempt: number,
  mayRun: boolean,
) => Promise<Observation<D> | null>;

export interface Trial<D> {
  /** 0-based, in the order first tested */
  index: number;
  subset: number[];
  /** every run of this configuration, in order */
  observations: Array<Observation<D>>;
  /** what its runs agreed on; `flaky` when they did not */
  outcome: Outcome | 'flaky';
}

export interface SearchResult<D> {
  status: SearchStatus;
  /** the likeliest candidate (empty when the endpoints did not allow a search) */
  minimal: number[];
  /** true when `minimal` reached the confidence */
  proven: boolean;
  trials: Array<Trial<D>>;
  /** trials (by index) whose runs disagreed */
  flaky: number[];
  /** runs made (cache hits excluded) */
  runs: number;
  /** the likeliest candidates, best first */
  culprits: PosteriorRecord['culprits'];
  /** posterior means: the culprit's failure rate and the background flake rate */
  failureRate: PosteriorRecord['failureRate'];
}

export interface SearchOptions {
  /** stop once a candidate's posterior reaches this (default 0.95) */
  confidence?: number;
  /** most runs (cache hits are free); default 60 */
  maxRuns?: number;
  /** runs per chosen configuration (≥ 1) */
  repeat?: number;
  /** runs of the bad side before it counts as not reproducing the failure (default: a quarter of maxRuns) */
  reproduceTries?: number;
  /** after every run: the posterior as it stands (a live view shows it) */
  onPosterior?: (p: PosteriorRecord) => void;
}

export const DEFAULT_CONFIDENCE = 0.95;
export const DEFAULT_MAX_RUNS = 60;
/** the good side is run up to this often when it fails once; failing most of them, it fails */
const GOOD_TRIES = 3;

class BudgetSpent extends Error {}

/** a subset's key: its indices sorted, comma-separated */
export const subsetKey = (s: readonly number[]) => [...s].sort((a, b) => a - b).join(',');

export async function flakySearch<D>(
  size: number,
  oracle: Oracle<D>,
  o: SearchOptions = {},
): Promise<SearchResult<D>> {
  const confidence = o.confidence ?? DEFAULT_CONFIDENCE;
  const maxRuns = o.maxRuns ?? DEFAULT_MAX_RUNS;
  const repeat = Math.max(1, Math.floor(o.repeat ?? 1));
  const post = new Posterior(size);
  const trials: Array<Trial<D>> = [];
  const byKey = new Map<string, Trial<D>>();
  let runs = 0;

  /** one run of `subset`: recorded, and evidence when it is a pass or the failure searched */
  const runOnce = async (subset: readonly number[]): Promise<Observation<D>> => {
    const k = subsetKey(subset);
    let t = byKey.get(k);
    const obs = await oracle(subset, t?.observations.length ?? 0, runs < maxRuns);
    if (!obs) throw new BudgetSpent();
    if (obs.ran) runs++;
    if (!t) {
      t = {
        index: trials.length,
        subset: [...subset].sort((a, b) => a - b),
        observations: [],
        outcome: obs.outcome,
      };
      trials.push(t);
      byKey.set(k, t);
    }
    t.observations.push(obs);
    const kinds = new Set(t.observations.filter((x) => x.applied !== false).map((x) => x.outcome));
    t.outcome = kinds.size > 1 ? 'flaky' : (kinds.values().next().value ?? obs.outcome);
    if (obs.applied !== false && obs.outcome !== 'unresolved') post.observe(subset, obs.outcome === 'fail');
    o.onPosterior?.({
      culprits: post.ranked().slice(0, 5),
      failureRate: post.rates(),
      evidence: post.observed,
    });
    return obs;
  };
  const counted = (x: Observation<D>) => x.applied !== false;
  const all = Array.from({ length: size }, (_, i) => i);
  const result = (status: SearchStatus): SearchResult<D> => {
    const ranked = post.ranked();
    const searched = status === 'found' || status === 'uncertain';
    return {
      status,
      minimal: searched ? ranked[0]!.changes : [],
      proven: status === 'found',
      trials,
      flaky: trials.filter((t) => t.outcome === 'flaky').map((t) => t.index),
      runs,
      culprits: ranked.slice(0, 5),
      failureRate: post.rates(),
    };
  };

  // the endpoints: the bad side until it has failed once (asked first: its failure is what the
  // oracle learns to look for), then the good side, again when it fails, to tell a flake from a
  // good side that fails
  try {
    let reproduced = false;
    // a quarter of the budget, so a larger --max-runs waits longer for a rare failure: at 30 % a
    // run, 15 tries (the default budget's) miss it 0.5 % of the time, 50 (--max-runs 200) 2e-8
    const tries = o.reproduceTries ?? Math.max(1, Math.floor(maxRuns / 4));
    let unapplied = 0;
    // a process that twice did not see the bad side's changes will not: a wrapper or launcher
    // drops them, and more runs cannot tell anything
    for (let i = 0; i < tries && !reproduced && unapplied < 2; i++) {
      const obs = await runOnce(all);
      reproduced = counted(obs) && obs.outcome === 'fail';
      if (!counted(obs)) unapplied++;
    }
    if (!reproduced) return result('not-reproduced');
    let goodFails = 0;
    for (let i = 0; i < GOOD_TRIES; i++) {
      const obs = await runOnce([]);
      if (!counted(obs) || obs.outcome === 'pass') break;
      goodFails++;
    }
    if (goodFails * 2 > GOOD_TRIES) return result('good-fails');
  } catch (e) {
    if (e instanceof BudgetSpent) return result('budget');
    throw e;
  }

  try {
    while ((post.ranked()[0]?.posterior ?? 1) < confidence) {
      const { subset } = nextTrial(post);
      for (let i = 0; i < repeat; i++) await runOnce(subset);
    }
  } catch (e) {
    if (e instanceof BudgetSpent) return result('uncertain');
    throw e;
  }
  return result('found');
}
