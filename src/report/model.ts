/**
 * The report's content as data, built from the notebook alone (no clock, no files, no lane
 * re-reads), so the same notebook always gives the same report. Markdown and JSON are two
 * renderings of this one object.
 */
import type { Cell, Notebook } from '../notebook/model.js';
import { maskArgv, maskEnv } from '../notebook/secrets.js';

export type Decision = 'GO' | 'NO-GO' | 'CONDITIONAL GO' | 'IN PROGRESS';

export const DECISION_EMOJI: Record<Decision, string> = {
  GO: '✅',
  'NO-GO': '❌',
  'CONDITIONAL GO': '⚠️',
  'IN PROGRESS': '🔄',
};

export interface ReportRow {
  cell: Cell;
  configuration: string;
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
  rows: ReportRow[];
  summary: string[];
  recommendations: string[];
  rationale: string[];
}

const day = (iso: string | undefined) => (iso ?? '').slice(0, 10) || '1970-01-01';

/** "c2 batched-prefill (+NSA_PREFILL_BATCHED=1 vs c1)" */
export function configurationOf(cell: Cell, all: Cell[]): string {
  const parent = cell.parent ? all.find((c) => c.id === cell.parent) : undefined;
  const diff = parent ? envDiff(parent.env, cell.env) : [];
  return `${cell.id} ${cell.lane.name}${diff.length ? ` (${diff.join(', ')} vs ${parent!.id})` : ''}`;
}

/** changed, added and removed variables from `a` to `b`, as `NAME=new` / `-NAME` */
export function envDiff(a: Record<string, string>, b: Record<string, string>): string[] {
  const out: string[] = [];
  for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (!(k in b)) out.push(`-${k}`);
    else if (a[k] !== b[k]) out.push(`${k}=${b[k]}`);
  }
  return out;
}

function hangPoint(c: Cell): string {
  const s = c.summary;
  if (!s) return c.state === 'running' ? 'running' : '–';
  if (s.stall) return `step ${s.stall.step} (${s.stall.where}), rank ${s.stall.rank}`;
  if (s.crash) return `crash at step ${s.crash.step}`;
  if (s.nan) return `NaN at step ${s.nan.step}`;
  return 'none';
}

function keyFinding(c: Cell): string {
  const s = c.summary;
  if (!s) return c.state === 'running' ? 'still running' : 'no verdict';
  if (s.stall && c.excerpts?.dumpTop[0]) return `hang; main thread in ${frameFn(c.excerpts.dumpTop[0])}`;
  if (s.crash) return `${s.crash.exception}: ${s.crash.message}`;
  if (s.nan) return `non-finite loss at step ${s.nan.step}`;
  const toks = s.medianToksPerS != null ? `, median ${s.medianToksPerS} toks/s` : '';
  return c.go ? `passed ${s.stepsReached} steps${toks}` : (c.reasons?.[0] ?? s.line);
}

/** "file:12 in fn: code" → "fn (file:12)" */
export function frameFn(frame: string): string {
  const m = /^(.*):(\d+) in ([^:]+)/.exec(frame);
  return m ? `${m[3]} (${m[1]!.split('/').pop()}:${m[2]})` : frame;
}

function decisionOf(cells: Cell[]): Decision {
  const done = cells.filter((c) => c.state !== 'running');
  if (done.length === 0) return 'IN PROGRESS';
  const go = done.filter((c) => c.go).length;
  if (go === done.length && done.length === cells.length) return 'GO';
  if (go === 0) return 'NO-GO';
  return 'CONDITIONAL GO';
}

function platformOf(cells: Cell[]): { platform: string; pytorch: string; cuda: string } {
  const p = cells.find((c) => c.platform?.gpu)?.platform ?? cells.find((c) => c.platform)?.platform;
  const gpu = p?.gpu
    ? `${p.gpuCount ?? 1}×${p.gpu}${p.gpuMemMiB ? ` ${Math.round(p.gpuMemMiB / 1024)}GB` : ''}`
    : 'unknown (no nvidia-smi samples)';
  const demo = cells.some((c) => c.demo) ? ' (simulated: bundled demo trainer)' : '';
  return { platform: gpu + demo, pytorch: p?.torch ?? 'unknown', cuda: p?.cuda ?? 'unknown' };
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

function recommendations(cells: Cell[]): string[] {
  const out: string[] = [];
  const goes = cells.filter((c) => c.go);
  for (const c of cells) {
    if (c.state === 'running' || c.go) continue;
    const fix = goes
      .map((g) => ({ g, d: envDiff(c.env, g.env) }))
      .filter((x) => x.d.length > 0 && x.d.length <= 3)
      .sort((x, y) => x.d.length - y.d.length)[0];
    const s = c.summary;
    if (s?.stall) {
      const where = c.excerpts?.dumpTop[0]
        ? `; the main thread sits in ${frameFn(c.excerpts.dumpTop[0])}`
        : '';
      out.push(`${c.id} ${c.lane.name}: hang at step ${s.stall.step} (${s.stall.where})${where}.`);
    } else if (s?.crash) {
      const meaning = signatureMeaning(c);
      out.push(
        `${c.id} ${c.lane.name}: fix the ${s.crash.exception}${s.crash.where ? ` in ${s.crash.where}` : ''}${meaning ? ` (${meaning})` : ''}.`,
      );
    } else if (s?.nan) {
      out.push(
        `${c.id} ${c.lane.name}: non-finite loss at step ${s.nan.step}; keep this precision/config out of production.`,
      );
    } else {
      out.push(`${c.id} ${c.lane.name}: ${c.reasons?.join('; ') || 'did not meet its acceptance'}.`);
    }
    if (fix)
      out.push(
        `  Try ${fix.d.map(change).join(', ')}: the env of ${fix.g.id} ${fix.g.lane.name}, which passed.`,
      );
  }
  if (goes.length && out.length === 0)
    out.push('All configurations met their acceptance; continue to a longer run.');
  if (!goes.length && cells.length) out.push('No configuration passed: do not proceed to production runs.');
  return out;
}

const change = (d: string) => (d.startsWith('-') ? `unsetting \`${d.slice(1)}\`` : `\`${d}\``);

function signatureMeaning(c: Cell): string {
  const sigs = (c.analysis?.signatures ?? []) as Array<{ implies?: string; meaning?: string }>;
  return sigs.find((s) => s.implies === c.verdict && s.meaning)?.meaning ?? '';
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
  const ends = safe.map((c) => c.ended ?? c.started ?? c.created).sort();
  const date = day(ends[ends.length - 1] ?? nb.created);
  const subject = nb.subject ?? o.subject;
  const version = o.version ?? 1;
  const decision = decisionOf(safe);
  const rows = safe.map((c) => ({
    cell: c,
    configuration: configurationOf(c, nb.cells),
    stepsReached: c.summary
      ? `${c.summary.stepsReached}${(c.lane.acceptance.steps ?? stepsOf(c)) ? ` / ${c.lane.acceptance.steps ?? stepsOf(c)}` : ''}`
      : '–',
    hangPoint: hangPoint(c),
    keyFinding: keyFinding(c),
    go: c.state === 'running' ? null : !!c.go,
  }));
  const go = safe.filter((c) => c.go).map((c) => `${c.id} ${c.lane.name}`);
  const nogo = safe
    .filter((c) => c.state !== 'running' && !c.go)
    .map((c) => `${c.id} ${c.lane.name} (${c.summary?.line ?? c.verdict ?? 'no verdict'})`);
  const summary = [
    `${safe.length} configuration${safe.length === 1 ? '' : 's'} ran from notebook cells; decision **${decision}** ${DECISION_EMOJI[decision]}.`,
    go.length ? `GO: ${go.join(', ')}.` : 'No configuration met its acceptance.',
    ...(nogo.length ? [`NO-GO: ${nogo.join('; ')}.`] : []),
  ];
  const rationale = safe.map((c) =>
    c.state === 'running'
      ? `${c.id} ${c.lane.name}: still running, not judged.`
      : c.go
        ? `${c.id} ${c.lane.name}: GO ✅ — met its acceptance: ${met(c)}.`
        : `${c.id} ${c.lane.name}: NO-GO ❌ — ${c.reasons?.join('; ') || `verdict ${c.verdict}`}.`,
  );
  return {
    title: `# ${date} Test Engineer Report - ${subject} v${version}`,
    date,
    subject,
    version,
    ...platformOf(safe),
    decision,
    rows,
    summary,
    recommendations: recommendations(safe),
    rationale,
  };
}

function stepsOf(c: Cell): number | undefined {
  const i = c.command.lastIndexOf('--steps');
  const v = i >= 0 ? Number(c.command[i + 1]) : Number.NaN;
  return Number.isFinite(v) ? v : c.lane.steps;
}
