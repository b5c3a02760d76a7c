/**
 * Axis arithmetic for the report's chart: "nice" tick values (steps of 1, 2, 2.5 or 5 × 10ⁿ, so
 * labels read 5.68 / 5.69, not 5.661 / 5.680), decade ticks for a log axis, and fixed number
 * formatting (the same notebook must give the same bytes).
 */

export interface Axis {
  lo: number;
  hi: number;
  ticks: number[];
  /** decimals the tick labels need */
  decimals: number;
  log: boolean;
}

const STEPS = [1, 2, 2.5, 5, 10];

/** ticks covering [lo, hi] with about `count` intervals; lo and hi are widened to ticks */
export function niceAxis(lo: number, hi: number, count = 5, opts: { integer?: boolean } = {}): Axis {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) [lo, hi] = [0, 1];
  if (hi < lo) [lo, hi] = [hi, lo];
  if (hi === lo) {
    const d = Math.abs(lo) > 0 ? Math.abs(lo) * 0.05 : 1;
    [lo, hi] = [lo - d, hi + d];
  }
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  let step = (STEPS.find((s) => s * mag >= raw * 0.999) ?? 10) * mag;
  if (opts.integer) step = Math.max(1, Math.round(step));
  const first = Math.floor(lo / step + 1e-9) * step;
  const last = Math.ceil(hi / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let v = first, i = 0; v <= last + step * 1e-6 && i < 100; i++, v = first + i * step)
    ticks.push(clean(v));
  const decimals = Math.max(
    0,
    -Math.floor(Math.log10(step) + 1e-9) + (Math.round(step / mag) === 2.5 ? 1 : 0),
  );
  return { lo: ticks[0]!, hi: ticks[ticks.length - 1]!, ticks, decimals, log: false };
}

/** a log axis from 1 to the first of 1, 2, 5, 10, 20, 50, ... at or past `hi` */
export function logAxis(hi: number): Axis {
  const ticks: number[] = [];
  for (let i = 0; i < 30; i++) {
    const v = [1, 2, 5][i % 3]! * 10 ** Math.floor(i / 3);
    ticks.push(v);
    if (v >= hi) break;
  }
  return { lo: 1, hi: Math.max(ticks[ticks.length - 1]!, 2), ticks, decimals: 0, log: true };
}

/** position of `v` in [0, 1] along the axis */
export function fraction(a: Axis, v: number): number {
  if (a.log) return (Math.log10(Math.max(v, 1)) - Math.log10(a.lo)) / (Math.log10(a.hi) - Math.log10(a.lo));
  return (v - a.lo) / (a.hi - a.lo);
}

/** float noise off: 0.30000000000000004 → 0.3 */
function clean(v: number): number {
  return Number(v.toPrecision(12));
}
