/** The trials table as text: aligned columns for the terminal, a Markdown table for the report. */

import type { BisectionRecord } from '../notebook/bisection-record.js';
import type { Notebook } from '../notebook/model.js';
import { describeChange } from './delta.js';
import { conclusionOf, type TrialRow, trialRows } from './summary.js';

export const TABLE_HEAD = ['trial', 'cell', 'env delta vs good', 'verdict', 'steps', 'stall location'];

export function rowCells(r: TrialRow, code = (s: string) => s): string[] {
  const cells = r.cells.map((id, i) => (r.cached[i] ? `${id} (cached)` : id)).join(', ');
  const runs = r.cells.length;
  const counts = runs > 1 || r.notApplied.length ? ` ${r.fails}✗ ${r.passes}✓` : '';
  const skipped = r.notApplied.length ? ` (${r.notApplied.length} not applied)` : '';
  const verdict = `${r.outcome === 'flaky' ? `${r.verdict} (flaky)` : r.verdict}${counts}${skipped}`;
  const loc = r.location.replace(/`([^`]*)`/g, (_m, f: string) => code(f));
  return [
    String(r.trial),
    cells || '–',
    r.delta,
    verdict,
    r.stepsReached === null ? '–' : String(r.stepsReached),
    loc || '–',
  ];
}

/** "NSA_X=1  ████████░░░░  0.97": the likeliest candidates, a bar each (width of the bar in cells) */
export function posteriorLines(b: BisectionRecord, bar = 20): string[] {
  const p = b.posterior;
  if (!p) return [];
  const names = p.culprits.map((c) =>
    c.changes.map((i) => (b.changes[i] ? describeChange(b.changes[i]) : `#${i}`)).join(' + '),
  );
  const w = Math.max(...names.map((n) => n.length), 0);
  const lines = p.culprits.map((c, i) => {
    const full = Math.round(c.posterior * bar);
    return `${names[i]!.padEnd(w)}  ${'█'.repeat(full)}${'░'.repeat(bar - full)}  ${c.posterior.toFixed(2)}`;
  });
  const pct = (x: number) => `${Math.round(x * 100)} %`;
  return [
    ...lines,
    `culprit fails ~${pct(p.failureRate.culprit)} of its runs; background ${pct(p.failureRate.background)}; ${p.evidence} runs as evidence; stop at ${b.confidence ?? 0.95} or ${b.maxRuns ?? '?'} runs`,
  ];
}

/** every run whose process did not see its changes: "trial 3 c7: change not applied: A (…)" */
export function notAppliedLines(nb: Notebook, b: BisectionRecord): string[] {
  return trialRows(nb, b).flatMap((r) => r.notApplied.map((t) => `trial ${r.trial} ${t}`));
}

/** aligned plain columns (the CLI) */
export function textTable(nb: Notebook, b: BisectionRecord): string[] {
  const rows = [TABLE_HEAD, ...trialRows(nb, b).map((r) => rowCells(r))];
  const widths = TABLE_HEAD.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

const md = (s: string) => s.replace(/\|/g, '\\|');

/** the report's section for one bisection */
export function markdownSection(nb: Notebook, b: BisectionRecord): string[] {
  const row = (cells: string[]) => `| ${cells.map(md).join(' | ')} |`;
  const sides = `good \`${b.good.lane}\`${b.good.cell ? ` (${b.good.cell})` : ''}, bad \`${b.bad.lane}\`${b.bad.cell ? ` (${b.bad.cell})` : ''}`;
  return [
    `### Bisection ${b.id}: ${sides}`,
    '',
    `**Conclusion**: ${conclusionOf(nb, b)}`,
    '',
    `${searched(b)}; ${runsText(b)}.`,
    '',
    ...(b.posterior ? ['Candidates (posterior):', '', '```', ...posteriorLines(b), '```', ''] : []),
    ...notAppliedLines(nb, b).map((l) => `- ${md(l)}`),
    ...(notAppliedLines(nb, b).length ? [''] : []),
    row(TABLE_HEAD),
    `|${TABLE_HEAD.map(() => ' --- ').join('|')}|`,
    ...trialRows(nb, b).map((r) => row(rowCells(r, (f) => `\`${f}\``))),
    '',
  ];
}

/** what was searched for: "4 changes searched for the bad side's `hang`" (a passing bad side has none) */
function searched(b: BisectionRecord): string {
  const changes = `${b.changes.length} change${b.changes.length === 1 ? '' : 's'}`;
  const cls = b.verdictClass;
  if (!cls) return `${changes} between the two sides`;
  if (cls === 'pass' || cls === 'slow')
    return `${changes} between the two sides; the bad side was GO here (${cls}), so there was no failure to search for`;
  if (b.result?.status === 'not-reproduced')
    return `${changes} searched; applied to the good side they did not reproduce the bad side's \`${cls}\``;
  return `${changes} searched for the bad side's \`${cls}\``;
}

function runsText(b: BisectionRecord): string {
  const runs = b.result?.runs ?? 0;
  const budget = b.budget !== undefined ? ` (budget ${b.budget})` : '';
  const repeat = b.repeat > 1 ? `, each trial ${b.repeat}×` : '';
  const status = b.result
    ? b.result.status === 'found'
      ? b.posterior
        ? `found (posterior ${b.posterior.culprits[0]?.posterior.toFixed(2)} ≥ ${b.confidence ?? 0.95})`
        : // a bisection recorded before the posterior (delta debugging) proved minimality instead
          b.result.proven
          ? 'proven 1-minimal'
          : 'not proven minimal'
      : b.result.status === 'uncertain'
        ? 'uncertain (budget spent below the confidence)'
        : b.result.status === 'not-reproduced'
          ? 'nothing to narrow down'
          : b.result.status === 'good-fails'
            ? 'the good side did not pass'
            : 'budget spent'
    : b.state;
  return `${runs} run${runs === 1 ? '' : 's'}${budget}${repeat}; ${status}`;
}
