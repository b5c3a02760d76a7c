/**
 * One-line sparkline. Written here rather than taken from the `sparkline` package, which scales with
 * integer bit-shifts and flattens series whose range is below 1.
 */
const BARS = '▁▂▃▄▅▆▇█';

export interface SparklineOptions {
  /** keep only the newest `width` values */
  width?: number;
  /** fixed scale ends; by default the min/max of the finite values shown */
  min?: number;
  max?: number;
}

export function sparkline(values: readonly number[], opts: SparklineOptions = {}): string {
  const shown = opts.width !== undefined ? values.slice(Math.max(0, values.length - opts.width)) : values;
  const finite = shown.filter(Number.isFinite);
  if (finite.length === 0) return ' '.repeat(shown.length);
  const lo = opts.min ?? Math.min(...finite);
  const hi = opts.max ?? Math.max(...finite);
  const span = hi - lo;
  let out = '';
  for (const v of shown) {
    if (!Number.isFinite(v)) out += ' ';
    // All equal: a steady mid-height line reads better than an empty-looking floor.
    else if (span <= 0) out += BARS[3];
    else {
      const i = Math.round(((Math.min(hi, Math.max(lo, v)) - lo) / span) * (BARS.length - 1));
      out += BARS[i];
    }
  }
  return out;
}
