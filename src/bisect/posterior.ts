/**
 * The belief of a flaky bisection: which change (or pair of changes) makes the failure, how often
 * that culprit fails a run (θ), and how often any run fails anyway (the background flake rate ε).
 * Pure and incremental: each run is evidence, never a verdict.
 *
 * Hypotheses are (candidate, θ, ε) on a small grid. A run of subset S fails with probability
 * 1 − (1 − ε)(1 − θ) when the candidate is contained in S, else ε. θ = 1 carries half the prior mass:
 * most bring-up failures are deterministic, and with that mass a deterministic failure is named
 * after as few runs as delta debugging needs; one run that passes with the culprit applied rules
 * θ = 1 out for that candidate, and the flaky values take over.
 */

/** the culprit's failure rate per run */
export const THETAS = [...Array.from({ length: 19 }, (_, i) => (i + 1) / 20), 1];
/** the background flake rate: rare by prior, learned from runs without the culprit */
export const EPSILONS = [0.002, 0.01, 0.02, 0.05, 0.1];
const EPSILON_PRIOR = [0.3, 0.3, 0.2, 0.15, 0.05];
const DETERMINISTIC_PRIOR = 0.5;
/** pairs share this much prior mass: a single change is the likelier story (Occam) */
const PAIR_PRIOR = 0.1;

/** single changes, then pairs: the sets a failure is blamed on */
export function candidatesOf(size: number): number[][] {
  const out: number[][] = Array.from({ length: size }, (_, i) => [i]);
  for (let a = 0; a < size; a++) for (let b = a + 1; b < size; b++) out.push([a, b]);
  return out;
}

const logOf = (p: number) => (p > 0 ? Math.log(p) : Number.NEGATIVE_INFINITY);

/** how much a candidate explains: fail probability when it is applied, and when it is not */
export interface Predictive {
  /** P(fail | candidate applied) */
  applied: number;
  /** P(fail | candidate not applied): the background */
  background: number;
}

export class Posterior {
  readonly candidates: number[][];
  /** log prior + log likelihood per (candidate, θ, ε) */
  private readonly logw: Float64Array;
  private readonly cell = THETAS.length * EPSILONS.length;
  private cache: { mass: number[]; weights: Float64Array } | null = null;
  /** runs taken as evidence */
  observed = 0;

  constructor(readonly size: number) {
    this.candidates = candidatesOf(size);
    const singles = size;
    const pairs = this.candidates.length - size;
    const pairShare = pairs > 0 ? PAIR_PRIOR : 0;
    this.logw = new Float64Array(this.candidates.length * this.cell);
    for (const [ci, c] of this.candidates.entries()) {
      const pc = c.length === 1 ? (1 - pairShare) / singles : pairShare / pairs;
      for (const [ti, t] of THETAS.entries()) {
        const pt = t === 1 ? DETERMINISTIC_PRIOR : (1 - DETERMINISTIC_PRIOR) / (THETAS.length - 1);
        for (const [ei] of EPSILONS.entries())
          this.logw[ci * this.cell + ti * EPSILONS.length + ei] = Math.log(pc * pt * EPSILON_PRIOR[ei]!);
      }
    }
  }

  /** one run of `subset` (indices of changes applied to the good side): it failed or it passed */
  observe(subset: readonly number[], failed: boolean): void {
    const applied = new Set(subset);
    // the two likelihood tables (candidate applied or not), shared by every candidate
    const when = (contained: boolean) =>
      THETAS.flatMap((t) =>
        EPSILONS.map((e) => {
          const p = contained ? 1 - (1 - e) * (1 - t) : e;
          return logOf(failed ? p : 1 - p);
        }),
      );
    const yes = when(true);
    const no = when(false);
    for (const [ci, c] of this.candidates.entries()) {
      const table = c.every((x) => applied.has(x)) ? yes : no;
      const base = ci * this.cell;
      for (let k = 0; k < this.cell; k++) this.logw[base + k]! += table[k]!;
    }
    this.observed++;
    this.cache = null;
  }

  /** normalised weights and each candidate's posterior mass */
  private normalised(): { mass: number[]; weights: Float64Array } {
    if (this.cache) return this.cache;
    let max = Number.NEGATIVE_INFINITY;
    for (const v of this.logw) if (v > max) max = v;
    const weights = new Float64Array(this.logw.length);
    let total = 0;
    for (let i = 0; i < weights.length; i++) {
      weights[i] = Math.exp(this.logw[i]! - max);
      total += weights[i]!;
    }
    const mass = this.candidates.map(() => 0);
    for (let i = 0; i < weights.length; i++) {
      weights[i]! /= total;
      mass[Math.floor(i / this.cell)]! += weights[i]!;
    }
    this.cache = { mass, weights };
    return this.cache;
  }

  /** posterior mass per candidate (same order as `candidates`) */
  mass(): number[] {
    return this.normalised().mass;
  }

  /** candidates by posterior, likeliest first (ties: fewer changes, then lower indices) */
  ranked(): Array<{ changes: number[]; posterior: number }> {
    const mass = this.mass();
    return this.candidates
      .map((changes, i) => ({ changes, posterior: mass[i]!, i }))
      .sort((a, b) => b.posterior - a.posterior || a.i - b.i)
      .map(({ changes, posterior }) => ({ changes, posterior }));
  }

  /** per candidate: its fail probability applied and not applied, averaged over θ and ε */
  predictive(): Predictive[] {
    const { mass, weights } = this.normalised();
    return this.candidates.map((_, ci) => {
      let applied = 0;
      let background = 0;
      const base = ci * this.cell;
      for (const [ti, t] of THETAS.entries())
        for (const [ei, e] of EPSILONS.entries()) {
          const w = weights[base + ti * EPSILONS.length + ei]!;
          applied += w * (1 - (1 - e) * (1 - t));
          background += w * e;
        }
      const m = mass[ci]! || 1;
      return { applied: applied / m, background: background / m };
    });
  }

  /** posterior means of the culprit's failure rate θ and the background rate ε */
  rates(): { culprit: number; background: number } {
    const { weights } = this.normalised();
    let culprit = 0;
    let background = 0;
    for (let i = 0; i < weights.length; i++) {
      const k = i % this.cell;
      culprit += weights[i]! * THETAS[Math.floor(k / EPSILONS.length)]!;
      background += weights[i]! * EPSILONS[k % EPSILONS.length]!;
    }
    return { culprit, background };
  }
}
