/**
 * Is B really faster than A? The difference of two runs' mean step time (or toks/s) with a 95 %
 * confidence interval from their per-step values: warm-up steps left out, and the steps' own
 * autocorrelation allowed for (a slow step tends to follow a slow step: a thermal dip, a neighbour
 * on the box), by an effective sample size n·(1−ρ)/(1+ρ) from each run's lag-1 autocorrelation ρ.
 * The interval on the ratio of means comes from the delta method, with Welch's degrees of freedom.
 * When it spans zero the runs are not told apart: "no difference detectable at ±X %", and how
 * many steps per run would resolve a difference the size of the one seen. Pure.
 */

export type AbMetric = 'step time' | 'toks/s';

export interface AbStat {
  metric: AbMetric;
  /** the runs' means over the steps used */
  meanA: number;
  meanB: number;
  /** (B − A) / A */
  diff: number;
  /** the 95 % interval of diff */
  lo: number;
  hi: number;
  /** per-step values used (after warm-up) and their effective count */
  used: { a: number; b: number };
  effective: { a: number; b: number };
  /** the interval excludes zero */
  resolved: boolean;
  /** when not resolved: steps per run that would resolve a difference of the size seen */
  stepsToResolve?: number;
}

/** fewer values than this after warm-up: no statement */
export const MIN_VALUES = 8;

/** the steps a run's first values come from (compilation, caches, allocator growth) */
function warmupCount(n: number): number {
  return Math.max(3, Math.ceil(n * 0.1));
}

interface Moments {
  mean: number;
  /** variance of the mean, autocorrelation allowed for */
  varMean: number;
  n: number;
  nEff: number;
}

function moments(values: number[]): Moments {
  const n = values.length;
  const mean = values.reduce((s, v) => s + v, 0) / n;
  let ss = 0;
  let lag = 0;
  for (let i = 0; i < n; i++) {
    const d = values[i]! - mean;
    ss += d * d;
    if (i > 0) lag += d * (values[i - 1]! - mean);
  }
  const variance = ss / (n - 1);
  // only positive correlation widens the interval; a negative estimate is noise at these sizes
  const rho = ss > 0 ? Math.min(0.95, Math.max(0, lag / ss)) : 0;
  const nEff = Math.max(2, (n * (1 - rho)) / (1 + rho));
  return { mean, varMean: variance / nEff, n, nEff };
}

/** Student's t quantile at 97.5 % (Cornish–Fisher expansion; within 1 % from 3 degrees of freedom) */
export function t975(df: number): number {
  const z = 1.959964;
  const d = Math.max(df, 1);
  return z + (z ** 3 + z) / (4 * d) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * d * d);
}

/** values by step, warm-up dropped; null when too few are left */
function usable(series: ReadonlyArray<readonly [number, number]>): number[] | null {
  const sorted = [...series].filter(([, v]) => Number.isFinite(v) && v > 0).sort((x, y) => x[0] - y[0]);
  const kept = sorted.slice(warmupCount(sorted.length)).map(([, v]) => v);
  return kept.length >= MIN_VALUES ? kept : null;
}

export function abCompare(
  a: ReadonlyArray<readonly [number, number]>,
  b: ReadonlyArray<readonly [number, number]>,
  metric: AbMetric,
): AbStat | null {
  const va = usable(a);
  const vb = usable(b);
  if (va === null || vb === null) return null;
  const ma = moments(va);
  const mb = moments(vb);
  if (ma.mean <= 0 || mb.mean <= 0) return null;
  const ratio = mb.mean / ma.mean;
  const ra = ma.varMean / ma.mean ** 2;
  const rb = mb.varMean / mb.mean ** 2;
  const relVar = ra + rb;
  const se = ratio * Math.sqrt(relVar);
  const df = relVar > 0 ? relVar ** 2 / (ra ** 2 / (ma.nEff - 1) + rb ** 2 / (mb.nEff - 1)) : ma.n + mb.n - 2;
  const half = t975(df) * se;
  const diff = ratio - 1;
  const lo = diff - half;
  const hi = diff + half;
  const resolved = lo > 0 || hi < 0;
  const out: AbStat = {
    metric,
    meanA: ma.mean,
    meanB: mb.mean,
    diff,
    lo,
    hi,
    used: { a: ma.n, b: mb.n },
    effective: { a: Math.round(ma.nEff), b: Math.round(mb.nEff) },
    resolved,
  };
  // the half-width shrinks as 1/√n: the steps at which it would equal the difference seen
  if (!resolved && Math.abs(diff) > 1e-9) {
    const n = Math.max(ma.n, mb.n);
    out.stepsToResolve = Math.ceil((n * (half / Math.abs(diff)) ** 2) / (1 - 0.1));
  }
  return out;
}

const num = (x: number) => {
  const v = Math.abs(x * 100);
  return v >= 10 ? v.toFixed(0) : v.toFixed(1);
};
const pct = (x: number) => `${num(x)} %`;
const signed = (x: number) => `${x < 0 ? '−' : '+'}${pct(x)}`;

/** "step time: B 3.1 % shorter than A (95 % CI 2.4–3.8 %)", or the unresolved form */
export function abText(s: AbStat, names: { a: string; b: string } = { a: 'A', b: 'B' }): string {
  if (!s.resolved) {
    const more =
      s.stepsToResolve !== undefined
        ? `; about ${s.stepsToResolve} steps a run would tell a ${pct(s.diff)} difference`
        : '';
    return `${s.metric}: no difference detectable at ±${pct((s.hi - s.lo) / 2)} (${names.b} vs ${names.a}: ${signed(s.diff)}, 95 % CI ${signed(s.lo)} to ${signed(s.hi)}${more})`;
  }
  const up = s.diff > 0;
  const word = s.metric === 'step time' ? (up ? 'longer' : 'shorter') : up ? 'higher' : 'lower';
  const [lo, hi] = up ? [s.lo, s.hi] : [-s.hi, -s.lo];
  return `${s.metric}: ${names.b} ${pct(s.diff)} ${word} than ${names.a} (95 % CI ${num(lo)}–${pct(hi)}, ${s.used.a}/${s.used.b} steps)`;
}

/** what a run keeps for the comparison: its toks/s and step-time series, [step, value] */
export interface AbSeries {
  toks: ReadonlyArray<readonly [number, number]>;
  stepMs?: ReadonlyArray<readonly [number, number]>;
}

/** the step time where both runs have one, and toks/s where both print it */
export function abOfRuns(a: AbSeries, b: AbSeries): AbStat[] {
  const out: AbStat[] = [];
  const step = a.stepMs && b.stepMs ? abCompare(a.stepMs, b.stepMs, 'step time') : null;
  if (step) out.push(step);
  const toks = abCompare(a.toks, b.toks, 'toks/s');
  if (toks) out.push(toks);
  return out;
}
