/**
 * The report in the seed reports' Markdown form: title, bold metadata block, a short Executive
 * Summary, the results table and chart, performance, the flag bisections, Recommendations, the
 * GO/NO-GO decision with its conditions and rationale; then an appendix with one section per cell
 * whose bulk (commands, env, excerpts) folds away.
 */

import { stepTimeText } from '../analysis/run-rates.js';
import { rateOrDash } from '../util/rate.js';
import { boxCheckHeader, boxCheckSection } from './box-check.js';
import { cellSection, details } from './markdown-cells.js';
import { DECISION_EMOJI, type ReportModel } from './model.js';
import { type PerfRow, times } from './performance.js';

const cellText = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
/** more rows than this go into a collapsible block */
const FOLD_ROWS = 8;

function performance(m: ReportModel): string[] {
  const p = m.performance;
  if (p.rows.length === 0) return [];
  const table = [
    '| Configuration | Median toks/s | vs fastest GO | Median step | Wall s/step | Lane target |',
    '| --- | --- | --- | --- | --- | --- |',
    ...p.rows.map(
      (r) =>
        `| ${cellText(r.configuration)} | ${rateOrDash(r.toksPerS)} | ${vsFastestText(r)} | ${r.medianStepS === null ? '–' : stepTimeText(r.medianStepS)} | ${r.stepS ?? '–'} | ${r.target === null ? '–' : `${r.target} toks/s`} |`,
    ),
  ];
  return [
    '## Performance',
    '',
    ...p.findings.map((f) => `- ${f}`),
    '',
    ...(p.rows.length > FOLD_ROWS
      ? details(`Throughput of all ${p.rows.length} cells`, table)
      : [...table, '']),
    "Median step: the trainer's own printed step time where it prints one, else its step lines' arrivals over the logging interval. Wall s/step: the run from launch to exit over the steps it reached (start-up included), for runs that ended by themselves.",
    '',
  ];
}

export function renderMarkdown(
  m: ReportModel,
  o: {
    notebook: string;
    chart?: string;
    /** flag bisections' sections (src/bisect/table.ts) */
    bisections?: string[];
  },
): string {
  const e = DECISION_EMOJI[m.decision];
  const lines = [
    m.title,
    '',
    `**Date**: ${m.date}  `,
    `**Platform**: ${m.platform}  `,
    `**PyTorch**: ${m.pytorch}  `,
    `**CUDA**: ${m.cuda}  `,
    ...m.boxChecks.map(boxCheckHeader),
    `**Notebook**: \`${o.notebook}\` (${m.rows.length} cell${m.rows.length === 1 ? '' : 's'})  `,
    `**Decision**: **${m.decision}** ${e}${m.decisionNote ? ` — ${m.decisionNote}` : ''}`,
    '',
    '## Executive Summary',
    '',
    ...m.summary,
    '',
    ...boxCheckSection(m.boxChecks),
    '## Test Results',
    '',
    ...(o.chart ? [`![loss and toks/s by cell](${o.chart})`, ''] : []),
    '| Configuration | Steps Reached | Hang Point | Key Finding |',
    '| --- | --- | --- | --- |',
    ...m.rows.map(
      (r) =>
        `| ${cellText(r.configuration)} | ${r.stepsReached} | ${cellText(r.hangPoint)} | ${cellText(r.keyFinding)} |`,
    ),
    '',
    ...performance(m),
    ...(o.bisections?.length ? ['## Flag Bisection', '', ...o.bisections] : []),
    '## Recommendations',
    '',
    ...m.recommendations.flatMap((g) => [`### ${g.title}`, '', ...g.items.map((i) => `- ${i}`), '']),
    `## GO/NO-GO Decision: ${m.decision} ${e}`,
    '',
    ...(m.conditions.length
      ? ['### Conditions for Full GO', '', ...m.conditions.map((c) => `- ${c}`), '']
      : []),
    '### Rationale',
    '',
    ...m.rationale.map((r) => `- ${r}`),
    '',
    '## Appendix: Cells',
    '',
    ...m.rows.flatMap(cellSection),
  ];
  while (lines[lines.length - 1] === '') lines.pop();
  return `${lines.join('\n')}\n`;
}

/** the table's word against the fastest: no "1.1× slower" whose 95 % interval holds no difference */
function vsFastestText(r: Pick<PerfRow, 'unfinished' | 'slowerBy' | 'vsFastest'>): string {
  if (r.unfinished) return 'not ranked: did not finish';
  if (r.slowerBy === null) return '–';
  const ab = r.vsFastest;
  if (ab && !ab.resolved) return `same (±${Math.round(((ab.hi - ab.lo) / 2) * 1000) / 10} %)`;
  if (r.slowerBy >= 1.05) return `${times(r.slowerBy)} slower`;
  if (r.slowerBy <= 0.95) return `${times(1 / r.slowerBy)} faster`;
  return 'same';
}
