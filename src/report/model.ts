/**
 * The report's content as data, built from the notebook alone (no clock, no files, no lane
 * re-reads), so the same notebook always gives the same report. Markdown and JSON are two
 * renderings of this one object.
 */
import { isCheckCell } from '../notebook/check-cell.js';
import type { Cell, Notebook } from '../notebook/model.js';
import { maskArgv, maskEnv } from '../notebook/secrets.js';
import { rateText } from '../util/rate.js';
import { type BoxCheckReport, boxChecksOf } from './box-check.js';
import {
  configurationOf,
  failureOf,
  frameFn,
  judged,
  originOf,
  slowGo,
  stepsOf,
  stoppedByUser,
  trialDelta,
  trialOf,
} from './cells.js';
import { type Performance, performanceOf } from './performance.js';
import { platformOf } from './platform.js';
import { adviceFor, type RecommendationGroup } from './recommend.js';
import { listed, rationaleOf, summaryOf } from './summary.js';

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
  /** a cell made from another: how ("NSA_FOO=bar set on c1"), else null */
  origin: string | null;
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
  /** each box's newest check cell (none when no box was checked) */
  boxChecks: BoxCheckReport[];
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
  const toks = s.medianToksPerS != null ? `, median ${rateText(s.medianToksPerS)} toks/s` : '';
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

export function buildReport(
  nb: Notebook,
  o: { subject: string; version?: number; cells?: string[] },
): ReportModel {
  const picked = o.cells?.length
    ? nb.cells.filter((c) => o.cells!.includes(c.id) || o.cells!.includes(c.lane.name))
    : nb.cells;
  // box checks are no runs: they go to the platform's check, for the boxes the runs shown ran on
  // (and any check picked by name)
  const cells = picked.filter((c) => !isCheckCell(c));
  const targets = new Set(cells.map((c) => c.target));
  const boxChecks = boxChecksOf(
    nb.cells.filter(
      (c) => isCheckCell(c) && (!o.cells?.length || picked.includes(c) || targets.has(c.target)),
    ),
  );
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
      origin: originOf(c, nb),
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
    boxChecks,
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
