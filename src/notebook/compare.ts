/** Two cells side by side: what differs in env and command, and their summaries in one table. */

import { abOfRuns, abText } from '../analysis/ab-compare.js';
import { rateOrDash } from '../util/rate.js';
import type { Cell } from './model.js';

export interface Comparison {
  env: Array<{ name: string; a: string | null; b: string | null }>;
  /** argv words only one of the two has (run dirs and out dirs always differ: left out) */
  command: { onlyA: string[]; onlyB: string[] };
  summary: Array<{ label: string; a: string; b: string }>;
  /**
   * B against A with a 95 % interval (step time, toks/s), or why there is none: a run that did not
   * finish is not ranked against one that did
   */
  ab: string[];
}

const unfinished = (c: Cell) =>
  c.state === 'running' || Boolean(c.summary?.stall || c.summary?.crash || c.summary?.nan);

function abLines(a: Cell, b: Cell): string[] {
  const open = [a, b].filter(unfinished);
  if (open.length) return [`not ranked: ${open.map((c) => c.id).join(' and ')} did not finish`];
  const stats = abOfRuns(a.series, b.series);
  if (stats.length === 0) return ['too few steps for an interval (8 a run after warm-up)'];
  return stats.map((s) => abText(s, { a: a.id, b: b.id }));
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
    ab: abLines(a, b),
  };
}
