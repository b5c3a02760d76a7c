/**
 * Straggler ranking from stack samples. In synchronous data parallel every rank's step takes the
 * same time (they all meet in the same collective), so step times cannot tell who is slow; where
 * each rank is when sampled can: the ranks that wait for a slow one are found inside the collective
 * more often than it is. Pure: per-rank counts in (samples taken, samples inside a collective
 * wait), a score per rank out, and the straggler named only when it stands out with confidence.
 *
 * The confidence is a test, not a ratio: the candidate (the rank found waiting least) against the
 * pooled rate of all the others, with the binomial lower tail (exact: a true straggler is found
 * waiting 0–2 times in 80 samples, where a normal approximation is far off), its variance widened
 * by the spread the other ranks show among themselves (quasi-binomial: samples within one step are
 * not independent, and which rank is slowest varies step to step), and multiplied by the number of
 * ranks (the candidate was picked as the least waiting of them: Bonferroni).
 */

import type { EvidenceState } from './evidence-state.js';

export interface RankSampleCounts {
  rank: number;
  /** the node the rank runs on, when known */
  node: string | null;
  /** stack samples taken of the rank's main thread */
  samples: number;
  /** of them, those inside a collective wait (stack-diff.ts's inCollective) */
  waiting: number;
  /** rounds in which this rank was the only one sampled not waiting (the last to arrive) */
  lone?: number;
}

export interface StragglerRank {
  rank: number;
  node: string | null;
  /** 1 − waitShare: 0 = always waiting for the others, 1 = never waiting */
  score: number;
  /** share of samples inside a collective wait */
  waitShare: number;
  samples: number;
  /** true on the one rank named the straggler */
  named: boolean;
  /**
   * how sure the test is that this rank waits less than the others (1 − the corrected p-value);
   * for every rank but the candidate, 0
   */
  confidence: number;
}

/** fewest samples of the candidate before it may be named */
const MIN_SAMPLES = 20;
/** fewest waiting samples among the others (with none waiting, nobody holds anyone back) */
const MIN_OTHERS_WAITING = 5;
/** confidence needed to name it */
const CONFIDENCE = 0.95;
/**
 * the candidate must wait at most this share of the others' rate: with hours of samples a small
 * real difference (rank 0's logging) becomes "significant", and is no straggler worth a name
 */
const MAX_RELATIVE_WAIT = 0.5;

/** ln Γ(x), Lanczos (g = 7): the binomial coefficient of a non-integer (overdispersed) count */
function lnGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const y = x - 1;
  let a = c[0]!;
  const t = y + 7.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (y + i);
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(a);
}

/** P(X ≤ k) for X ~ Binomial(n, p); n may be fractional (an effective sample size) */
export function binomialLowerTail(k: number, n: number, p: number): number {
  if (k >= n || p <= 0) return 1;
  if (p >= 1) return 0;
  let sum = 0;
  const lnN = lnGamma(n + 1);
  for (let i = 0; i <= Math.round(k); i++)
    sum += Math.exp(lnN - lnGamma(i + 1) - lnGamma(n - i + 1) + i * Math.log(p) + (n - i) * Math.log1p(-p));
  return Math.min(1, sum);
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** how much more the others' counts spread than a binomial allows (≥ 1): Pearson χ² / df */
function dispersion(others: RankSampleCounts[], q: number): number {
  if (others.length < 2 || q <= 0 || q >= 1) return 1;
  let chi2 = 0;
  for (const o of others) {
    if (o.samples === 0) continue;
    const e = o.samples * q;
    chi2 += (o.waiting - e) ** 2 / (e * (1 - q));
  }
  return Math.max(1, chi2 / (others.length - 1));
}

/**
 * The lone test: in how many rounds (all ranks sampled at one moment) a rank was the only one not
 * waiting while every other sampled rank waited, i.e. the last to arrive. With no straggler that
 * falls evenly on the ranks (1/R each); a straggler is the last nearly every time. P(X ≥ c) for
 * X ~ Binomial(T, 1/R), through the lower tail of T − X. The all_reduce's own time, when every rank
 * waits, drops out here; it is what blunts the share test on a busy box.
 */
function lonePValue(c: number, total: number, ranks: number): number {
  if (total === 0 || c === 0) return 1;
  return binomialLowerTail(total - c, total, 1 - 1 / ranks);
}

/**
 * Every sampled rank scored, rank order; `named` on at most one. A run of one rank, or ranks none of
 * which was ever found waiting, names nobody. Two tests, each Bonferroni-corrected for picking the
 * candidate among R ranks and the two together for being two: the candidate's waiting share
 * against the others' (quasi-binomial), and how often it was the one last to arrive (the lone
 * test). Both must point at the same rank, and the test that decides must also show a large
 * effect (at most half the others' waiting share; last to arrive in at least half the rounds).
 */
export function rankStragglers(counts: RankSampleCounts[]): StragglerRank[] {
  const sampled = counts.filter((c) => c.samples > 0).sort((a, b) => a.rank - b.rank);
  const out = sampled.map<StragglerRank>((c) => ({
    rank: c.rank,
    node: c.node,
    score: r3(1 - c.waiting / c.samples),
    waitShare: r3(c.waiting / c.samples),
    samples: c.samples,
    named: false,
    confidence: 0,
  }));
  if (sampled.length < 2) return out;
  // the candidate: the rank found waiting least (the most samples breaks a tie: more evidence)
  const cand = [...sampled].sort(
    (a, b) => a.waiting / a.samples - b.waiting / b.samples || b.samples - a.samples || a.rank - b.rank,
  )[0]!;
  const others = sampled.filter((c) => c !== cand);
  const n = others.reduce((a, c) => a + c.samples, 0);
  const k = others.reduce((a, c) => a + c.waiting, 0);
  const q = k / n;
  const phi = dispersion(others, q);
  const pShare = binomialLowerTail(cand.waiting / phi, cand.samples / phi, q);
  const lone = sampled.reduce((a, c) => a + (c.lone ?? 0), 0);
  const topLone = Math.max(...sampled.map((c) => c.lone ?? 0));
  // the lone test speaks for the candidate only when it is the one most often last
  const loneAgrees =
    (cand.lone ?? 0) === topLone && sampled.filter((c) => (c.lone ?? 0) === topLone).length === 1;
  const pLone = loneAgrees ? lonePValue(cand.lone ?? 0, lone, sampled.length) : 1;
  // each test corrected for the R ranks the candidate was picked from, and for there being two
  const sure = (p: number) => Math.max(0, 1 - Math.min(1, 2 * p * sampled.length));
  const shareOk =
    sure(pShare) >= CONFIDENCE &&
    k >= MIN_OTHERS_WAITING &&
    cand.waiting / cand.samples <= MAX_RELATIVE_WAIT * q;
  const loneOk = sure(pLone) >= CONFIDENCE && (cand.lone ?? 0) >= 0.5 * lone;
  const row = out.find((r) => r.rank === cand.rank)!;
  row.confidence = r3(sure(Math.min(pShare, pLone)));
  row.named = cand.samples >= MIN_SAMPLES && (shareOk || loneOk);
  return out;
}

/** one line for a person: "rank 3 (node a) is the straggler: waits 1 % vs 9 %, 97 % sure" */
export function stragglerText(list: StragglerRank[]): string | null {
  const s = list.find((r) => r.named);
  if (s === undefined) {
    if (list.length < 2) return null;
    const n = Math.min(...list.map((r) => r.samples));
    return `no straggler: no rank stands out (${list.length} ranks, ≥ ${n} stack samples each)`;
  }
  const rest = list.filter((r) => r !== s);
  const w = rest.reduce((a, r) => a + r.waitShare * r.samples, 0) / rest.reduce((a, r) => a + r.samples, 0);
  const pct = (x: number) => `${Math.round(x * 100)} %`;
  return (
    `straggler: rank ${s.rank}${s.node ? ` (${s.node})` : ''}, score ${s.score.toFixed(2)}: ` +
    `found waiting for the others in ${pct(s.waitShare)} of ${s.samples} samples vs ${pct(w)} for the rest ` +
    `(${(s.confidence * 100).toFixed(1)} % sure)`
  );
}

/** the evidence's sample counts, ranked (the node: the run's node map, else the hook's host) */
export function stragglersOf(
  s: Pick<EvidenceState, 'stackSamples' | 'sampleRounds' | 'nodes' | 'workers'>,
): StragglerRank[] {
  // rounds with at least three ranks sampled, exactly one of them not waiting: its last arriver
  const lone = new Map<number, number>();
  for (const r of s.sampleRounds.values())
    if (r.n >= 3 && r.n - r.waiting === 1 && r.lone >= 0) lone.set(r.lone, (lone.get(r.lone) ?? 0) + 1);
  return rankStragglers(
    [...s.stackSamples].map(([rank, c]) => ({
      rank,
      node: s.nodes.placeOf(rank)?.node ?? (s.workers.get(rank)?.host || null),
      samples: c.samples,
      waiting: c.waiting,
      lone: lone.get(rank) ?? 0,
    })),
  );
}
