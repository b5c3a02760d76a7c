/**
 * How a throughput (toks/s) reads wherever a person sees one: whole numbers from 100 up (in
 * "median 5779.4 toks/s" the decimal is noise: step times vary by far more than 0.002 %), about
 * three significant figures below (83.04 → 83, 2.345 → 2.35), so a slow run still shows its size.
 * Display only: JSON and the notebook keep the number as measured.
 */
export function rateText(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (Math.abs(v) >= 100) return String(Math.round(v));
  return String(Number(v.toPrecision(3)));
}

/** rateText, or an en dash where there is no rate */
export const rateOrDash = (v: number | null | undefined): string => (v == null ? '–' : rateText(v));
