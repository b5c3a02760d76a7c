/**
 * The report's content as data, built from the notebook alone (no clock, no files, no lane
 * re-reads), so the same notebook always gives the same report. Markdown and JSON are two
 * renderings of this one object.
 */
import type { BisectionRecord } from '../bisect/model.js';
import type { Cell, Notebook } from '../notebook/model.js';
import { maskArgv, maskEnv } from '../notebook/secrets.js';
import {
  configurationOf,
  failureOf,
  frameFn,
  judged,
  slowGo,
  stoppedByUser,
  trialDelta,
  trialOf,
} from './cells.js';
import { type Performance, performanceOf } from './performance.js';
import { platformOf } from './platform.js';
import { adviceFor, type RecommendationGroup } from './recommend.js';

export { envDiff } from '../notebook/env-diff.js';
export { configurationOf, frameFn } from './cells.js';

export type Decision = 'GO' | 'NO-GO' | 'CONDITIONAL GO' | 'IN PROGRESS';

export const DECISION_EMOJI: Record<Decision, string> = {
  GO: '✅',
  'NO-GO': '❌',
  'CONDITIONAL GO': '⚠️',
  'IN PROGRESS': '🔄',
};

/** a cell's standing in the report */
export type CellStatus = 'go' | 'slow-go' | 'no-go' | 'stopped' | 'running' | 'failed';

export interface ReportRow {
  cell: Cell;
  configuration: string;
  /** what ran: the lane and its description, or a bisection trial's lane plus its changes */
  ran: string;
  status: CellStatus;
  stepsReached: string;
  hangPoint: string;
  keyFinding: string;
  go: boolean | null;
}

export interface ReportModel {
  title: string;
  date: string;
  subject: string;
  version: number;
  platform: string;
  pytorch: string;
  cuda: string;
  decision: Decision;
  /** what a CONDITIONAL GO hangs on, in a few words ('' otherwise) */
  decisionNote: string;
  rows: ReportRow[];
  summary: string[];
  performance: {
    rows: Array<Omit<Performance['rows'][number], 'cell'> & { cellId: string }>;
    findings: string[];
  };
  recommendations: RecommendationGroup[];
  /** what a CONDITIONAL GO depends on, one line each */
  conditions: string[];
  rationale: string[];
  /** the flag bisections the report shows (those with a trial among its cells) */
  bisections: string[];
}

const day = (iso: string | undefined) => (iso ?? '').slice(0, 10) || '1970-01-01';
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function statusOf(c: Cell): CellStatus {
  if (c.state === 'running') return 'running';
  if (c.state === 'failed') return 'failed';
  if (stoppedByUser(c)) return 'stopped';
  if (c.go) return slowGo(c) ? 'slow-go' : 'go';
  return 'no-go';
}

function hangPoint(c: Cell): string {
  const s = c.summary;
  if (stoppedByUser(c)) return `stopped at step ${s?.stepsReached ?? 0}`;
  if (!s) return c.state === 'running' ? 'running' : '–';
  if (s.stall) return `step ${s.stall.step} (${s.stall.where}), rank ${s.stall.rank}`;
  if (s.crash) return `crash at step ${s.crash.step}`;
  if (s.nan) return `NaN at step ${s.nan.step}`;
  return 'none';
}

function keyFinding(c: Cell): string {
  const s = c.summary;
  if (stoppedByUser(c)) return 'stopped by the user before its verdict';
  if (!s) return c.state === 'running' ? 'still running' : 'no verdict';
  if (s.stall && c.excerpts?.dumpTop[0]) return `hang; main thread in ${frameFn(c.excerpts.dumpTop[0])}`;
  if (s.crash) return `${s.crash.exception}: ${s.crash.message}`;
  if (s.nan) return `non-finite loss at step ${s.nan.step}`;
  const toks = s.medianToksPerS != null ? `, median ${s.medianToksPerS} toks/s` : '';
  const slow = slowGo(c);
  if (c.go) return `passed ${s.stepsReached} steps${toks}${slow ? `; slow: ${slow}` : ''}`;
  return failureOf(c);
}

function decisionOf(cells: Cell[]): Decision {
  const judgedCells = cells.filter(judged);
  if (judgedCells.length === 0) return cells.some((c) => c.state === 'running') ? 'IN PROGRESS' : 'NO-GO';
  const go = judgedCells.filter((c) => c.go);
  if (go.length === 0) return 'NO-GO';
  const clean =
    go.length === judgedCells.length && judgedCells.length === cells.length && go.every((c) => !slowGo(c));
  return clean ? 'GO' : 'CONDITIONAL GO';
}

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
function listed(names: string[], max = 5): string {
  if (names.length <= max) return names.join(', ');
  return `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}

function summaryOf(
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

function rationaleOf(rows: ReportRow[], nb: Notebook): string[] {
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

export function buildReport(
  nb: Notebook,
  o: { subject: string; version?: number; cells?: string[] },
): ReportModel {
  const cells = o.cells?.length
    ? nb.cells.filter((c) => o.cells!.includes(c.id) || o.cells!.includes(c.lane.name))
    : nb.cells;
  // secrets were masked when the cells were written; mask again in case an older file held any
  const safe = cells.map((c) => ({ ...c, env: maskEnv(c.env), command: maskArgv(c.command) }));
  const shown = new Set(safe.map((c) => c.id));
  // a bisection belongs to the report when one of its trials is shown
  const bisections = (nb.bisections ?? []).filter((b) =>
    b.trials.some((t) => t.cells.some((id) => shown.has(id))),
  );
  const nameOf = (c: Cell) => configurationOf(c, nb);
  const ends = safe.map((c) => c.ended ?? c.started ?? c.created).sort();
  const date = day(ends[ends.length - 1] ?? nb.created);
  const subject = nb.subject ?? o.subject;
  const version = o.version ?? 1;
  const decision = decisionOf(safe);
  const rows: ReportRow[] = safe.map((c) => {
    const total = c.lane.acceptance.steps ?? stepsOf(c);
    return {
      cell: c,
      configuration: nameOf(c),
      ran: ranOf(c, nb),
      status: statusOf(c),
      stepsReached: c.summary ? `${c.summary.stepsReached}${total ? ` / ${total}` : ''}` : '–',
      hangPoint: hangPoint(c),
      keyFinding: keyFinding(c),
      go: c.state === 'running' || stoppedByUser(c) ? null : !!c.go,
    };
  });
  const perf = performanceOf(safe, nameOf);
  const advice = adviceFor(safe, bisections, nameOf);
  const decisionNote =
    decision !== 'CONDITIONAL GO'
      ? ''
      : advice.settings.length
        ? `GO with ${advice.settings.join(' and ')}; see Conditions for Full GO`
        : `GO only for ${listed(rows.filter((r) => r.go).map((r) => r.cell.id))}; see Conditions for Full GO`;
  return {
    title: `# ${date} Test Engineer Report - ${subject} v${version}`,
    date,
    subject,
    version,
    ...platformOf(safe),
    decision,
    decisionNote,
    rows,
    summary: summaryOf(
      rows,
      decision,
      decisionNote.replace(/; see Conditions for Full GO$/, ''),
      bisections,
      perf,
      nb,
    ),
    performance: {
      rows: perf.rows.map(({ cell, ...r }) => ({ cellId: cell.id, ...r })),
      findings: perf.findings,
    },
    recommendations: advice.recommendations,
    conditions: decision === 'CONDITIONAL GO' ? advice.conditions : [],
    rationale: rationaleOf(rows, nb),
    bisections: bisections.map((b) => b.id),
  };
}

/** a trial ran the good lane with some of the changes: the lane's description is not what ran */
function ranOf(c: Cell, nb: Notebook): string {
  const trial = trialOf(nb, c);
  if (!trial) return `\`${c.lane.name}\`${c.lane.description ? ` — ${c.lane.description}` : ''}`;
  const { b, t } = trial;
  const delta = trialDelta(trial, Number.POSITIVE_INFINITY);
  return `\`${c.lane.name}\`${delta ? ` with ${delta}` : ' as it is'} — trial ${t.index} of bisection ${b.id} (good \`${b.good.lane}\`, bad \`${b.bad.lane}\`)`;
}

function stepsOf(c: Cell): number | undefined {
  const i = c.command.lastIndexOf('--steps');
  const v = i >= 0 ? Number(c.command[i + 1]) : Number.NaN;
  return Number.isFinite(v) ? v : c.lane.steps;
}
