/**
 * The report's short texts: the Executive Summary (counts, what passed, failures grouped by what
 * happened, the bisections, the first performance finding) and the rationale per cell (a
 * bisection's trials folded into one line).
 */
import type { BisectionRecord } from '../notebook/bisection-record.js';
import type { Cell, Notebook } from '../notebook/model.js';
import { failureOf, slowGo, trialOf } from './cells.js';
import { type CellStatus, DECISION_EMOJI, type Decision, type ReportRow } from './model.js';
import type { Performance } from './performance.js';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function met(c: Cell): string {
  const a = c.lane.acceptance;
  const parts = [`reached step ${c.summary?.stepsReached ?? 0}${a.steps ? ` of ${a.steps}` : ''}`];
  if (a.finiteLoss) parts.push('finite loss');
  if (a.noStall) parts.push('no stall');
  if (a.vramLimitMiB !== undefined)
    parts.push(`peak reserved ${c.summary?.peakMemMiB ?? '?'} MiB ≤ ${a.vramLimitMiB} MiB`);
  return parts.join(', ');
}

/** "c1 baseline, c2 batched-prefill and 3 more" */
export function listed(names: string[], max = 5): string {
  if (names.length <= max) return names.join(', ');
  return `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}

export function summaryOf(
  rows: ReportRow[],
  decision: Decision,
  note: string,
  bisections: BisectionRecord[],
  perf: Performance,
  nb: Notebook,
): string[] {
  const by = (s: CellStatus[]) => rows.filter((r) => s.includes(r.status));
  const passed = by(['go', 'slow-go']);
  const failed = by(['no-go', 'failed']);
  const stopped = by(['stopped']);
  const running = by(['running']);
  const trials = rows.filter((r) => trialOf(nb, r.cell)).length;
  const counts = [
    `${passed.length} GO`,
    `${failed.length} NO-GO`,
    ...(stopped.length ? [`${stopped.length} stopped`] : []),
    ...(running.length ? [`${running.length} running`] : []),
  ];
  const out = [
    `- **${decision}** ${DECISION_EMOJI[decision]}${note ? `: ${note}` : ''}.`,
    `- ${plural(rows.length, 'cell')}: ${counts.join(', ')}${trials ? ` (${trials} of them bisection trials)` : ''}.`,
  ];
  if (passed.length)
    out.push(
      `- Passed: ${listed(passed.map((r) => `${r.cell.id} ${r.cell.lane.name}${r.status === 'slow-go' ? ' (slow)' : ''}`))}.`,
    );
  // failures grouped by what happened, so ten cells hanging in one place are one line
  const groups = new Map<string, string[]>();
  for (const r of failed)
    groups.set(failureOf(r.cell), [...(groups.get(failureOf(r.cell)) ?? []), r.cell.id]);
  if (groups.size)
    out.push(
      `- Failed: ${[...groups]
        .map(([what, ids]) => `${listed(ids, 4)} — ${what}`)
        .slice(0, 4)
        .join('; ')}${groups.size > 4 ? `; ${groups.size - 4} more kinds of failure` : ''}.`,
    );
  if (stopped.length) out.push(`- Stopped before a verdict: ${listed(stopped.map((r) => r.cell.id))}.`);
  for (const b of bisections)
    if (b.result?.status === 'found')
      out.push(
        `- Flag bisection ${b.id} isolated the cause of \`${b.bad.lane}\`'s ${b.verdictClass ?? 'failure'}: see Flag Bisection.`,
      );
  if (perf.findings[0]) out.push(`- Performance: ${perf.findings[0]}`);
  return out;
}

export function rationaleOf(rows: ReportRow[], nb: Notebook): string[] {
  const out: string[] = [];
  const byBisection = new Map<string, ReportRow[]>();
  for (const r of rows) {
    const t = trialOf(nb, r.cell);
    if (t) {
      byBisection.set(t.b.id, [...(byBisection.get(t.b.id) ?? []), r]);
      continue;
    }
    const c = r.cell;
    const name = `${c.id} ${c.lane.name}`;
    switch (r.status) {
      case 'running':
        out.push(`${name}: still running, not judged.`);
        break;
      case 'stopped':
        out.push(
          `${name}: stopped by the user at step ${c.summary?.stepsReached ?? 0} before its verdict, not judged.`,
        );
        break;
      case 'go':
        out.push(`${name}: GO ✅ — met its acceptance: ${met(c)}.`);
        break;
      case 'slow-go':
        out.push(`${name}: GO ✅ but slow ⚠️ (${slowGo(c)}) — met its acceptance: ${met(c)}.`);
        break;
      default:
        out.push(`${name}: NO-GO ❌ — ${c.reasons?.join('; ') || `verdict ${c.verdict}`}.`);
    }
  }
  for (const [id, rs] of byBisection) {
    const go = rs.filter((r) => r.go).length;
    out.push(
      `${rs.map((r) => r.cell.id).join(', ')}: trials of bisection ${id} (${go} GO, ${rs.length - go} NO-GO), judged in its table under Flag Bisection.`,
    );
  }
  return out;
}
