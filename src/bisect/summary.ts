/**
 * What a bisection says, read from the notebook alone: each trial's class, the table (trial, env
 * delta vs good, verdict, steps reached, stall location), the one-line conclusion and the JSON of
 * `bisect --json`. Pure: the TUI, the report and the CLI share these functions.
 */

import type { BisectionRecord, Change, Outcome } from '../notebook/bisection-record.js';
import type { Cell, Notebook } from '../notebook/model.js';
import { proofLine } from '../notebook/run-proof.js';
import { describeChange } from './delta.js';

/**
 * The class a trial is compared by: the verdict for a NO-GO (hang, crash, nan, incomplete,
 * stopped; `no-go` when only the acceptance failed), `slow` or `pass` for a GO.
 */
export function classOf(o: { verdict?: string; go?: boolean }): string {
  const v = o.verdict ?? 'unknown';
  if (o.go) return v === 'slow' ? 'slow' : 'pass';
  return v === 'pass' || v === 'slow' ? 'no-go' : v;
}

/** a trial against the class searched: the same failure, like the good side, or something else */
export function outcomeFor(target: string, cls: string): Outcome {
  if (cls === target) return 'fail';
  // searching for `slow`, only a clean pass is like the good side
  if (target === 'slow') return cls === 'pass' ? 'pass' : 'unresolved';
  return cls === 'pass' || cls === 'slow' ? 'pass' : 'unresolved';
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | null => (typeof v === 'object' && v !== null ? (v as Obj) : null);

/** the innermost program frame of a cell's stall, from its analysis */
function stallFunction(c: Cell): string | undefined {
  const f = obj(obj(obj(c.analysis)?.stall)?.frame);
  return typeof f?.function === 'string' ? f.function : undefined;
}

/** "step 6 in-step (`_forward_prefill_sequential`)", "step 1 RuntimeError at forward (...)", "" */
export function locationOf(c: Cell | undefined): string {
  const s = c?.summary;
  if (!c || !s) return '';
  if (s.stall) {
    const fn = stallFunction(c);
    return `step ${s.stall.step} ${s.stall.where}${fn ? ` (\`${fn}\`)` : ''}`;
  }
  if (s.crash)
    return `step ${s.crash.step} ${s.crash.exception}${s.crash.where ? ` at ${s.crash.where}` : ''}`;
  if (s.nan) return `step ${s.nan.step}`;
  return '';
}

export interface TrialRow {
  trial: number;
  cells: string[];
  cached: boolean[];
  delta: string;
  verdict: string;
  stepsReached: number | null;
  location: string;
  outcome: Outcome | 'flaky' | 'running';
  /** runs of this subset that failed as searched / passed (runs not applied excluded) */
  fails: number;
  passes: number;
  /** "change not applied: NAME (the process saw …)", one per run whose process missed its changes */
  notApplied: string[];
}

const deltaText = (changes: readonly Change[], subset: readonly number[], all: number) =>
  subset.length === 0
    ? '(good)'
    : subset.length === all && all > 1
      ? `all ${all} changes`
      : subset.map((i) => (changes[i] ? describeChange(changes[i]) : `#${i}`)).join(', ');

export function trialRows(nb: Notebook, b: BisectionRecord): TrialRow[] {
  const byId = new Map(nb.cells.map((c) => [c.id, c]));
  return b.trials.map((t) => {
    const cells = t.cells.map((id) => byId.get(id));
    const verdicts = [
      ...new Set(cells.map((c) => (c ? (c.state === 'running' ? 'running' : classOf(c)) : '?'))),
    ];
    const first = cells.find((c) => c?.state === 'done');
    const running = cells.some((c) => c?.state === 'running');
    const counted = (t.outcomes ?? []).filter((_, i) => t.applied?.[i] !== false);
    return {
      trial: t.index,
      cells: t.cells,
      cached: t.cached,
      delta: deltaText(b.changes, t.subset, b.changes.length),
      verdict: verdicts.join(' / '),
      stepsReached: first?.summary?.stepsReached ?? null,
      location: locationOf(first),
      outcome: running ? 'running' : t.outcome,
      fails: counted.filter((o) => o === 'fail').length,
      passes: counted.filter((o) => o === 'pass').length,
      notApplied: cells
        .filter((c) => c?.proof?.notApplied.length)
        .map((c) => `${c!.id}: ${proofLine(c!.proof)}`),
    };
  });
}

/** the trial of the minimal subset (its failure is what the conclusion describes) */
function minimalCell(nb: Notebook, b: BisectionRecord): Cell | undefined {
  const want = b.result?.minimal ?? [];
  // the minimal subset's own failing run first, else any failing run that applied it
  const ranked = [...b.trials].sort((x, y) => x.subset.length - y.subset.length);
  for (const t of ranked) {
    if (!want.every((i) => t.subset.includes(i))) continue;
    const at = (t.outcomes ?? [t.outcome]).findIndex((o, i) => o === 'fail' && t.applied?.[i] !== false);
    if (at >= 0) return nb.cells.find((c) => c.id === t.cells[at]);
  }
  return undefined;
}

/** e.g. "NSA_PREFILL_BATCHED unset → hang at step 6 in-step (`_forward_prefill_sequential`); alone sufficient" */
export function conclusionOf(nb: Notebook, b: BisectionRecord): string {
  const r = b.result;
  const cls = b.verdictClass ?? 'failure';
  if (!r) return b.state === 'running' ? 'running…' : (b.error ?? b.state);
  const flaky = b.trials.filter((t) => t.outcome === 'flaky').length;
  const flakyNote = flaky ? `; ${flaky} trial${flaky === 1 ? '' : 's'} flaky (repeats disagreed)` : '';
  const never = neverText(b);
  switch (r.status) {
    case 'good-fails':
      return `the good side is not GO (${b.trials[1]?.outcome === 'flaky' ? 'flaky' : trialRows(nb, b)[1]?.verdict}): nothing to bisect against${flakyNote}`;
    case 'not-reproduced':
      if (b.changes.length === 0) return 'the two sides have the same env and args: nothing to bisect';
      if (never) return `${never}the bad side was never run as meant: nothing to bisect`;
      if (b.verdictClass === 'pass') return 'the bad side is GO (pass): nothing to bisect';
      return `${never}the ${b.changes.length} env/args change${b.changes.length === 1 ? '' : 's'} applied to the good side do not reproduce the bad side's failure (${trialRows(nb, b)[0]?.verdict ?? '?'}): the difference is elsewhere (command, steps, detector, acceptance)${flakyNote}`;
    case 'budget':
      return `budget spent before the good and bad sides were both known${flakyNote}`;
  }
  const names = r.minimal.map((i) => (b.changes[i] ? describeChange(b.changes[i]) : `#${i}`));
  const loc = locationOf(minimalCell(nb, b));
  const what = `${cls}${loc ? ` at ${loc}` : ''}`;
  const how =
    r.minimal.length === 1
      ? 'alone sufficient'
      : `interaction: all ${r.minimal.length} needed together, none of them can be dropped`;
  const p = b.posterior;
  const top = p?.culprits[0]?.posterior;
  const odds = top === undefined ? '' : `posterior ${top.toFixed(2)}`;
  const proof = r.proven
    ? p && p.failureRate.culprit < 0.9
      ? `; flaky: fails ~${pct(p.failureRate.culprit)} of runs with it (background ${pct(p.failureRate.background)}), ${odds}`
      : ''
    : `; uncertain: ${odds || 'no posterior'} below the ${b.confidence ?? 0.95} asked, after ${r.runs} runs (budget spent)`;
  return `${neverText(b)}${names.join(' + ')} → ${what}; ${how}${proof}${flakyNote}`;
}

const pct = (x: number) => `${Math.round(x * 100)} %`;

/** "change not applied in any of its 6 runs: A (the process saw it unset), neither blamed nor cleared; " */
function neverText(b: BisectionRecord): string {
  const never = b.result?.neverApplied ?? [];
  if (never.length === 0) return '';
  return `${never.map((n) => `change not applied in any of its ${n.runs} runs: ${n.saw}`).join('; ')}; neither blamed nor cleared; `;
}

/** `bisect --json` */
export function bisectionJson(nb: Notebook, b: BisectionRecord) {
  const rows = trialRows(nb, b);
  return {
    minimal: (b.result?.minimal ?? []).map((i) => {
      const c = b.changes[i]!;
      return { name: c.name, good: c.good, bad: c.bad };
    }),
    trials: rows.map((row, i) => ({
      ...row,
      subset: b.trials[i]!.subset.map((x) => b.changes[x]?.name ?? `#${x}`),
    })),
    proven: b.result?.proven ?? false,
    verdictClass: b.verdictClass ?? null,
    status: b.result?.status ?? b.state,
    conclusion: conclusionOf(nb, b),
    bisection: b.id,
    good: b.good,
    bad: b.bad,
    changes: b.changes.map((c) => ({ name: c.name, kind: c.kind, good: c.good, bad: c.bad })),
    runs: b.result?.runs ?? 0,
    culprits: (b.posterior?.culprits ?? []).map((c) => ({
      changes: c.changes.map((i) => b.changes[i]?.name ?? `#${i}`),
      posterior: round(c.posterior),
    })),
    failureRate: b.posterior
      ? {
          culprit: round(b.posterior.failureRate.culprit),
          background: round(b.posterior.failureRate.background),
          badSide: badSideRate(rows[0]),
        }
      : null,
    confidence: b.confidence ?? null,
    maxRuns: b.maxRuns ?? null,
    notApplied: rows.flatMap((row) => row.notApplied.map((text) => ({ trial: row.trial, text }))),
    neverApplied: b.result?.neverApplied ?? [],
  };
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;
const badSideRate = (row: TrialRow | undefined) =>
  row && row.fails + row.passes > 0 ? round(row.fails / (row.fails + row.passes)) : null;
