/**
 * The report in the seed reports' Markdown form: title, bold metadata block, Executive Summary, the
 * results table, one section per cell (exact command, env, evidence excerpts and paths),
 * Recommendations, and the GO/NO-GO decision with its rationale.
 */
import type { Cell } from '../notebook/model.js';
import { shQuote } from '../util/sh-quote.js';
import { DECISION_EMOJI, type ReportModel } from './model.js';

const cellText = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const fence = (lang: string, lines: string[]) => ['```' + lang, ...lines, '```'];

/** env assignments then the argv, one per line, as a shell would take it */
function commandLines(c: Cell): string[] {
  const env = Object.keys(c.env)
    .sort()
    .map((k) => `${k}=${shQuote(c.env[k]!)} \\`);
  return [`cd ${shQuote(c.cwd)}`, ...env, c.command.map((a) => shQuote(a)).join(' ')];
}

const num = (v: number | null | undefined, unit = '') => (v == null ? '–' : `${v}${unit}`);

function cellSection(r: ReportModel['rows'][number]): string[] {
  const c = r.cell;
  const badge = r.go === null ? '🔄 RUNNING' : r.go ? '✅ GO' : '❌ NO-GO';
  const s = c.summary;
  const out = [`### ${r.configuration} ${badge}`, ''];
  out.push(`- **Lane**: \`${c.lane.name}\`${c.lane.description ? ` — ${c.lane.description}` : ''}`);
  if (c.parent) out.push(`- **From**: ${c.link ?? 'linked'} of ${c.parent}`);
  out.push(`- **Verdict**: ${c.verdict ?? c.state}${s ? ` — ${s.line}` : ''}`);
  if (c.reasons?.length) out.push(`- **Acceptance**: ${c.reasons.join('; ')}`);
  out.push(
    `- **Target**: ${c.target}; started ${c.started ?? c.created}${c.ended ? `, ended ${c.ended}` : ''}`,
  );
  if (c.git) out.push(`- **Trainer commit**: ${c.git.sha}${c.git.dirty ? ' (dirty work tree)' : ''}`);
  if (s)
    out.push(
      `- **Loss**: first ${num(s.firstLoss)}, last ${num(s.lastLoss)}, min ${num(s.minLoss)}; **median toks/s** ${num(s.medianToksPerS)}; **peak reserved** ${num(s.peakMemMiB, ' MiB')}; **exit status** ${num(s.exitCode)}`,
    );
  out.push('', '**Command**:', '', ...fence('bash', commandLines(c)), '');
  const x = c.excerpts;
  if (x?.steps.length) out.push('**Step lines**:', '', ...fence('', x.steps), '');
  if (s?.stall && x?.tail.length)
    out.push(`**Last output before the stall at step ${s.stall.step}**:`, '', ...fence('', x.tail), '');
  if (x?.dumpTop.length)
    out.push(
      `**Stack dump** \`${x.dumpFile}\`, main thread, innermost first:`,
      '',
      ...fence('', x.dumpTop),
      '',
    );
  if (x?.crash.length) out.push('**Crash**:', '', ...fence('', x.crash), '');
  if (s?.nan && !x?.crash.length && x?.tail.length)
    out.push('**Last output**:', '', ...fence('', x.tail), '');
  out.push(
    `**Evidence**: \`${c.evidenceDir}/\`${c.evidence.length ? ` — ${c.evidence.map((f) => `\`${f}\``).join(', ')}` : ''}`,
    '',
  );
  return out;
}

export function renderMarkdown(
  m: ReportModel,
  o: {
    notebook: string;
    chart?: string /** flag bisections' sections (src/bisect/table.ts) */;
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
    `**Notebook**: \`${o.notebook}\` (${m.rows.length} cell${m.rows.length === 1 ? '' : 's'})  `,
    `**Decision**: **${m.decision}** ${e}`,
    '',
    '## Executive Summary',
    '',
    ...m.summary,
    '',
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
    ...m.rows.flatMap(cellSection),
    ...(o.bisections?.length ? ['## Flag Bisection', '', ...o.bisections] : []),
    '## Recommendations',
    '',
    ...m.recommendations.map((r) => (r.startsWith('  ') ? `  - ${r.trim()}` : `- ${r}`)),
    '',
    `## GO/NO-GO Decision: ${m.decision} ${e}`,
    '',
    '### Rationale',
    '',
    ...m.rationale.map((r) => `- ${r}`),
    '',
  ];
  return lines.join('\n');
}
