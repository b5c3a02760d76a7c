/** Exponential moving average, the smoothed line drawn over the noisy raw series. */
import type { SeriesPoint } from '../../src/session/state.js';

/**
 * EMA with weight `alpha` on the newest value, seeded with the first finite value. Non-finite values
 * (a NaN loss) are carried through as-is so the chart shows the break, but do not poison the average.
 */
export function ema(points: readonly SeriesPoint[], alpha = 0.3): SeriesPoint[] {
  const out: SeriesPoint[] = [];
  let acc: number | null = null;
  for (const p of points) {
    if (!Number.isFinite(p.value)) {
      out.push({ step: p.step, value: p.value });
      continue;
    }
    acc = acc === null ? p.value : alpha * p.value + (1 - alpha) * acc;
    out.push({ step: p.step, value: acc });
  }
  return out;
}

/** The newest finite value of a series, or null. */
export function lastFinite(points: readonly SeriesPoint[]): SeriesPoint | null {
  for (let i = points.length - 1; i >= 0; i--) {
    const p = points[i]!;
    if (Number.isFinite(p.value)) return p;
  }
  return null;
}
