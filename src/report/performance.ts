/**
 * Throughput and step time across the cells, and what stands out: a cell much slower than the
 * fastest, a cell below its lane's target. The seed reports say "37 toks/s (target: 50+)"; a
 * notebook where one lane runs at 14.5 toks/s beside another's 88.8 must say it too.
 */
import { type AbStat, abCompare } from '../analysis/ab-compare.js';
import type { Cell } from '../notebook/model.js';
import { rateOrDash, rateText } from '../util/rate.js';
import { belowTarget, judged, stepsOf } from './cells.js';

/** slower than the fastest by at least this factor is worth a line */
export const SLOW_RATIO = 1.5;
/** findings spelled out; the rest are counted */
const MAX_FINDINGS = 6;

export interface PerfRow {
  cell: Cell;
  configuration: string;
  toksPerS: number | null;
  /** the fastest cell's toks/s over this one's (1 for the fastest); null when not compared */
  slowerBy: number | null;
  /**
   * its toks/s against the fastest's, per step with a 95 % interval (src/analysis/ab-compare.ts);
   * absent when either has too few steps. An interval that holds 0 makes no claim: "same (±X %)"
   */
  vsFastest?: AbStat;
  /** it did not run to its last step (hang, crash, NaN, short): its rate is not ranked */
  unfinished: boolean;
  /** the median step time: the trainer's own printed time, else step lines' arrivals over the interval */
  medianStepS: number | null;
  /** wall time per step reached, start-up included; null when the run did not end by itself */
  stepS: number | null;
  target: number | null;
}

export interface Performance {
  rows: PerfRow[];
  findings: string[];
}

const round = (v: number, d: number) => Math.round(v * 10 ** d) / 10 ** d;
const seconds = (s: number) => `${s >= 10 ? Math.round(s) : s >= 1 ? s.toFixed(1) : s.toFixed(2)} s`;
export const times = (r: number) => `${r >= 10 ? Math.round(r) : r.toFixed(1)}×`;

function wallStep(c: Cell): number | null {
  const s = c.summary;
  // a hang's time is the detector's, not the step's; a crash or NaN ended it early
  if (!s || s.stall || s.crash || s.nan || !c.started || !c.ended || s.stepsReached < 1) return null;
  const ms = Date.parse(c.ended) - Date.parse(c.started);
  return Number.isFinite(ms) && ms > 0 ? round(ms / 1000 / s.stepsReached, 2) : null;
}

/**
 * It ran every step it was asked for. A run that hung after 5 steps has the rate of its first
 * steps (warm-up, no evaluation, no checkpoint): ranked beside a finished run it reads "1.1×
 * faster" than the cell that passed, which says nothing.
 */
export function finished(c: Cell): boolean {
  const s = c.summary;
  if (!s || s.stall || s.crash || s.nan) return false;
  // the judge's word where it gave one (every-k logging from 0 never prints the last step)
  if (s.targetReached !== undefined) return s.targetReached;
  const total = c.lane.acceptance.steps ?? stepsOf(c);
  return total === undefined || s.stepsReached >= total;
}

export function performanceOf(cells: Cell[], nameOf: (c: Cell) => string): Performance {
  const measured = cells.filter((c) => judged(c) && finished(c) && c.summary?.medianToksPerS != null);
  // the reference is the fastest GO: "slower than a run that hung" says little
  // and a plain run before a bisection's trial: the same configuration reads better by its lane
  const plain = measured.filter((c) => c.go && !c.bisect);
  const goes = plain.length ? plain : measured.filter((c) => c.go);
  const fastest = (goes.length ? goes : measured).reduce<Cell | null>(
    (best, c) => (!best || c.summary!.medianToksPerS! > best.summary!.medianToksPerS! ? c : best),
    null,
  );
  const top = fastest?.summary?.medianToksPerS ?? null;
  const rows: PerfRow[] = cells
    .filter(
      (c) =>
        judged(c) &&
        (c.summary?.medianToksPerS != null ||
          c.summary?.medianStepS != null ||
          c.lane.target?.toksPerS !== undefined),
    )
    .map((c) => {
      const toks = c.summary?.medianToksPerS ?? null;
      const done = finished(c);
      const slowerBy = done && toks && top ? round(top / toks, 2) : null;
      const vs =
        slowerBy !== null && fastest !== null && c !== fastest
          ? abCompare(fastest.series.toks, c.series.toks, 'toks/s')
          : null;
      return {
        cell: c,
        configuration: nameOf(c),
        toksPerS: toks,
        slowerBy,
        ...(vs ? { vsFastest: vs } : {}),
        unfinished: !done,
        medianStepS: c.summary?.medianStepS ?? null,
        stepS: wallStep(c),
        target: c.lane.target?.toksPerS ?? null,
      };
    });
  const findings: string[] = [];
  const slow = rows
    .filter(
      (r) =>
        r.cell !== fastest &&
        r.slowerBy !== null &&
        r.slowerBy >= SLOW_RATIO &&
        r.vsFastest?.resolved !== false, // no claim whose interval holds no difference
    )
    .sort((a, b) => (b.slowerBy ?? 0) - (a.slowerBy ?? 0));
  for (const r of slow.slice(0, MAX_FINDINGS))
    findings.push(
      `${r.configuration} ran at ${rateOrDash(r.toksPerS)} toks/s, ${times(r.slowerBy!)} slower than ${nameOf(fastest!)} (${rateOrDash(top)} toks/s)${r.stepS !== null ? `; ${seconds(r.stepS)} a step` : ''}.`,
    );
  if (slow.length > MAX_FINDINGS)
    findings.push(
      `${slow.length - MAX_FINDINGS} more cells ran ≥ ${SLOW_RATIO}× slower than the fastest (table above).`,
    );
  for (const r of rows) {
    // a run that stopped early is not measured against a target either
    const below = r.unfinished ? null : belowTarget(r.cell);
    if (below)
      findings.push(
        `${r.configuration}: ${rateText(below.toks)} toks/s, below its lane's target of ${below.target} toks/s (${Math.round((below.toks / below.target) * 100)} % of it).`,
      );
    else if (r.target !== null && r.toksPerS === null)
      findings.push(
        `${r.configuration}: no throughput measured against its lane's target of ${r.target} toks/s.`,
      );
  }
  if (findings.length === 0 && measured.length > 1)
    findings.push(
      `Throughput is within ${SLOW_RATIO}× of ${nameOf(fastest!)} (${rateOrDash(top)} toks/s) in all ${measured.length} cells that measured it.`,
    );
  return { rows, findings };
}
