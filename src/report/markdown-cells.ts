/**
 * The appendix: one section per cell, its facts as a few bullet lines and the bulk (the exact
 * command and env, step lines, the output before a stall, the stack dump, a crash, the evidence
 * files) in collapsible `<details>` blocks, so a long notebook stays readable.
 */

import type { Cell } from '../notebook/model.js';
import { proofLine } from '../notebook/run-proof.js';
import { rateOrDash } from '../util/rate.js';
import { shQuote } from '../util/sh-quote.js';
import {
  cellDumps,
  evidenceFilesText,
  lastWordsLines,
  slowStepsLine,
  stragglerLines,
} from './cell-findings.js';
import { stoppedByUser } from './cells.js';
import type { CellStatus, ReportRow } from './model.js';
import { oomKillLines, teardownLine } from './teardown-lines.js';

export const BADGE: Record<CellStatus, string> = {
  go: '✅ GO',
  'slow-go': '✅ GO ⚠️ slow',
  'no-go': '❌ NO-GO',
  stopped: '⏹️ STOPPED',
  running: '🔄 RUNNING',
  failed: '❌ ERROR',
};

const fence = (lang: string, lines: string[]) => ['```' + lang, ...lines, '```'];

/** a collapsible block (GitHub renders Markdown inside when blank lines surround it) */
export function details(summary: string, body: string[]): string[] {
  return ['<details>', `<summary>${summary}</summary>`, '', ...body, '', '</details>', ''];
}

/** env assignments then the argv, one per line, as a shell would take it */
function commandLines(c: Cell): string[] {
  const env = Object.keys(c.env)
    .sort()
    .map((k) => `${k}=${shQuote(c.env[k]!)} \\`);
  return [`cd ${shQuote(c.cwd)}`, ...env, c.command.map((a) => shQuote(a)).join(' ')];
}

const num = (v: number | null | undefined, unit = '') => (v == null ? '–' : `${v}${unit}`);

function duration(c: Cell): string {
  const ms = c.started && c.ended ? Date.parse(c.ended) - Date.parse(c.started) : Number.NaN;
  if (!Number.isFinite(ms) || ms < 0) return '';
  const s = Math.round(ms / 1000);
  return ` (${s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`})`;
}

/** exit 130 (SIGINT) after our stop: a Python trainer's output ends in that KeyboardInterrupt, no crash */
const ourStop = (c: Cell) => !c.summary?.crash && c.summary?.exitCode === 130;

function stopLine(c: Cell): string | null {
  const s = c.summary;
  if (stoppedByUser(c))
    return `- **Stopped**: by the user at step ${s?.stepsReached ?? 0}, before its verdict: not judged${s?.exitCode != null ? `; exit status ${s.exitCode}` : ''}`;
  if (s?.stall)
    return `- **Stopped**: by nsa-dbg once the hang was confirmed (SIGINT, then SIGKILL if need be)${s.exitCode != null ? `; exit status ${s.exitCode}` : ''}${ourStop(c) ? '. A KeyboardInterrupt at the end of its output is that stop, not a crash' : ''}`;
  return null;
}

/** " (the same place in all 9 dumps of the run)": a hang sampled again and again is one dump */
function sameDumps(c: Cell, file: string | undefined): string {
  const g = cellDumps(c).find((d) => d.first.file === file || d.last.file === file);
  if (!g || g.count < 2) return '';
  return g.count === cellDumps(c).reduce((n, d) => n + d.count, 0)
    ? ` (the same place in all ${g.count} dumps of the run)`
    : ` (the same place in ${g.count} of the run's dumps)`;
}

export function cellSection(r: ReportRow): string[] {
  const c = r.cell;
  const s = c.summary;
  const out = [`### ${r.configuration} ${BADGE[r.status]}`, '', `- **Lane**: ${r.ran}`];
  if (r.origin) out.push(`- **From**: ${r.origin}`);
  out.push(`- **Verdict**: ${c.verdict ?? c.state}${s ? ` — ${s.line}` : ''}`);
  if (c.reasons?.length) out.push(`- **${c.go ? 'Note' : 'Acceptance'}**: ${c.reasons.join('; ')}`);
  // the env each rank's process started with, against the lane's: a dropped flag tested nothing
  if (c.proof) out.push(`- **Env seen by the trainer**: ${proofLine(c.proof)}`);
  const stop = stopLine(c);
  if (stop) out.push(stop);
  out.push(
    `- **Ran on**: ${c.target}; started ${c.started ?? c.created}${c.ended ? `, ended ${c.ended}${duration(c)}` : ''}`,
  );
  if (c.git) out.push(`- **Trainer commit**: ${c.git.sha}${c.git.dirty ? ' (dirty work tree)' : ''}`);
  const slow = slowStepsLine(c);
  if (slow) out.push(`- **Slow steps**: ${slow}`);
  if (s)
    out.push(
      `- **Loss**: first ${num(s.firstLoss)}, last ${num(s.lastLoss)}, min ${num(s.minLoss)}; **median toks/s** ${rateOrDash(s.medianToksPerS)}; **peak reserved** ${num(s.peakMemMiB, ' MiB')}; **exit status** ${num(s.exitCode)}${s.stepFormat ? `; **step lines** ${s.stepFormat}` : ''}`,
    );
  out.push(
    `- **Evidence**: \`${c.evidenceDir}/\` (${c.evidence.length} file${c.evidence.length === 1 ? '' : 's'})`,
    '',
  );
  // the bulk in one fold: the exact command first, then what the run printed and left behind
  const x = c.excerpts;
  const bulk = ['**Command and env**:', '', ...fence('bash', commandLines(c))];
  if (x?.steps.length) bulk.push('', '**Step lines**:', '', ...fence('', x.steps));
  if ((s?.stall || stoppedByUser(c)) && x?.tail.length)
    bulk.push(
      '',
      s?.stall
        ? `**Last output before the hang at step ${s.stall.step}**:`
        : '**Last output before the stop**:',
      '',
      ...fence('', x.tail),
    );
  if (s?.nan && !x?.crash.length && x?.tail.length)
    bulk.push('', '**Last output**:', '', ...fence('', x.tail));
  if (x?.dumpTop.length)
    bulk.push(
      '',
      `**Stack dump** \`${x.dumpFile}\`, main thread, innermost first${sameDumps(c, x.dumpFile)}:`,
      '',
      ...fence('', x.dumpTop),
    );
  if (c.evidence.length) bulk.push('', `**Evidence files**: ${evidenceFilesText(c.evidence)}`);
  out.push(...details('Command, env, output and evidence files', bulk));
  if (s?.crash && x?.crash.length) out.push('**Crash**:', '', ...fence('', x.crash), '');
  // only when a signal ended some rank and its stacks were written (the stack hook's last words),
  // or the kernel killed one (OOM), with what nsa-dbg saw of the others as the run came apart
  const words = [...oomKillLines(c), ...teardownLine(c), ...lastWordsLines(c)];
  if (words.length)
    out.push(
      '#### Last words',
      '',
      'Where each rank was when a signal ended it:',
      '',
      ...words.map((w) => `- ${w}`),
      '',
    );
  // which rank held the others back, from stack samples (src/analysis/straggler.ts)
  const [straggler, ...scores] = stragglerLines(c);
  if (straggler !== undefined)
    out.push('#### Stragglers', '', straggler, '', ...scores.map((r) => `- ${r}`), '');
  return out;
}
