/** Two cells side by side: what differs in env and command, and their summaries in one table. */

import { rateOrDash } from '../util/rate.js';
import type { Cell } from './model.js';

export interface Comparison {
  env: Array<{ name: string; a: string | null; b: string | null }>;
  /** argv words only one of the two has (run dirs and out dirs always differ: left out) */
  command: { onlyA: string[]; onlyB: string[] };
  summary: Array<{ label: string; a: string; b: string }>;
}

/** a run's own words (run dirs, out dirs: `20260101-120000-…`), which differ every run */
export const RUN_SPECIFIC = /\d{8}-\d{6}-/;

export function compareCells(a: Cell, b: Cell): Comparison {
  const names = [...new Set([...Object.keys(a.env), ...Object.keys(b.env)])].sort();
  const env = names
    .filter((n) => a.env[n] !== b.env[n])
    .map((name) => ({ name, a: a.env[name] ?? null, b: b.env[name] ?? null }));
  const words = (c: Cell) => c.command.filter((w) => !RUN_SPECIFIC.test(w));
  const wa = words(a);
  const wb = words(b);
  const v = (x: number | null | undefined, unit = '') => (x == null ? '–' : `${x}${unit}`);
  const row = (label: string, f: (c: Cell) => string) => ({ label, a: f(a), b: f(b) });
  return {
    env,
    command: { onlyA: wa.filter((w) => !wb.includes(w)), onlyB: wb.filter((w) => !wa.includes(w)) },
    summary: [
      row('lane', (c) => c.lane.name),
      row('GO/NO-GO', (c) => (c.state === 'running' ? 'running' : c.go ? 'GO' : 'NO-GO')),
      row('verdict', (c) => c.verdict ?? c.state),
      row('steps reached', (c) => v(c.summary?.stepsReached)),
      row('first / last loss', (c) => `${v(c.summary?.firstLoss)} / ${v(c.summary?.lastLoss)}`),
      row('min loss', (c) => v(c.summary?.minLoss)),
      row('median toks/s', (c) => rateOrDash(c.summary?.medianToksPerS)),
      row('peak reserved', (c) => v(c.summary?.peakMemMiB, ' MiB')),
      row('hang / NaN / crash', (c) => {
        const s = c.summary;
        if (s?.stall) return `hang step ${s.stall.step} (${s.stall.where})`;
        if (s?.nan) return `NaN step ${s.nan.step}`;
        if (s?.crash) return `${s.crash.exception} step ${s.crash.step}`;
        return '–';
      }),
    ],
  };
}
