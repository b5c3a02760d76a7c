/**
 * Counts of step durations and toks/s folded out of a rank's exact window: 0.1 %-wide log bins,
 * so a run of any length keeps its medians (and 95th percentiles) good to 0.1 % in bounded memory.
 */

const LN_BIN = Math.log(1.001);
/** a value's 0.1 %-wide log bin (non-positive values in bin -Infinity) */
const binOf = (v: number) => (v > 0 ? Math.floor(Math.log(v) / LN_BIN) : Number.NEGATIVE_INFINITY);

/** counts of positive values in 0.1 %-wide log bins (non-positive values in bin -Infinity) */
export class LogHistogram {
  readonly bins = new Map<number, number>();
  count = 0;
  add(v: number): void {
    const b = binOf(v);
    this.bins.set(b, (this.bins.get(b) ?? 0) + 1);
    this.count++;
  }
  static value(bin: number): number {
    return bin === Number.NEGATIVE_INFINITY ? 0 : Math.exp((bin + 0.5) * LN_BIN);
  }
  /** the q-quantile (0..1, interpolated between neighbours) of these counts plus `extra` exact values */
  quantile(q: number, extra: number[]): number | null {
    const all = new Map(this.bins);
    for (const v of extra) {
      const b = binOf(v);
      all.set(b, (all.get(b) ?? 0) + 1);
    }
    const n = this.count + extra.length;
    if (n === 0) return null;
    const sorted = [...all.entries()].sort((a, b) => a[0] - b[0]);
    const pos = q * (n - 1);
    let seen = 0;
    let lo: number | null = null;
    for (const [bin, c] of sorted) {
      if (lo === null && seen + c > Math.floor(pos)) lo = LogHistogram.value(bin);
      if (seen + c > Math.ceil(pos)) return lo! + (LogHistogram.value(bin) - lo!) * (pos - Math.floor(pos));
      seen += c;
    }
    return lo;
  }

  /** how many counted values are ≥ `limit` (bin resolution) */
  atLeast(limit: number): number {
    let n = 0;
    for (const [bin, c] of this.bins) if (LogHistogram.value(bin) >= limit) n += c;
    return n;
  }
}

/** the q-quantile of exact values, interpolated as LogHistogram.quantile does */
export function quantileOf(values: number[], q: number): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const pos = q * (s.length - 1);
  const lo = s[Math.floor(pos)]!;
  return lo + (s[Math.ceil(pos)]! - lo) * (pos - Math.floor(pos));
}
