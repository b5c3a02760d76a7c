/**
 * What the report says about one cell, from the notebook alone: how it is named (a bisection's
 * trial by the lane plus the changes it ran with), whether it was judged, stopped, slow or below
 * its lane's target, and short forms of its findings without the long paths of the run.
 */
import { describeChange } from '../bisect/delta.js';
import type { BisectionRecord, BisectTrialRecord } from '../notebook/bisection-record.js';
import { envDiff } from '../notebook/env-diff.js';
import type { Cell, Notebook } from '../notebook/model.js';
import { rateText } from '../util/rate.js';

export interface Trial {
  b: BisectionRecord;
  t: BisectTrialRecord;
}

/** the bisection trial a cell ran (or answered from cache) */
export function trialOf(nb: Pick<Notebook, 'bisections'>, c: Cell): Trial | undefined {
  for (const b of nb.bisections ?? []) {
    const t = c.bisect?.id === b.id ? b.trials.find((x) => x.index === c.bisect?.trial) : undefined;
    if (t) return { b, t };
  }
  return undefined;
}

/** "NSA_PREFILL_BATCHED unset, NSA_SEL_RANGES_V2=0"; a long list is counted, not spelled out */
export function trialDelta({ b, t }: Trial, max = 3): string {
  if (t.subset.length === 0) return '';
  if (t.subset.length > max) return `all ${t.subset.length} changes of ${b.bad.lane}`;
  return t.subset.map((i) => (b.changes[i] ? describeChange(b.changes[i]!) : `#${i}`)).join(', ');
}

/**
 * The name a row and a section go by: what the cell ran. A bisection's trial carries the good
 * lane's name whatever env it ran with, so it is named by the lane plus the changes applied to it
 * ("c12 batched-prefill + NSA_PREFILL_BATCHED unset"); a cell made from another by its env diff.
 */
export function configurationOf(cell: Cell, nb: Pick<Notebook, 'cells' | 'bisections'>): string {
  const trial = trialOf(nb, cell);
  if (trial) {
    const delta = trialDelta(trial);
    return `${cell.id} ${cell.lane.name}${delta ? ` + ${delta}` : ` (${trial.b.id} good side)`}`;
  }
  const parent = cell.parent ? nb.cells.find((c) => c.id === cell.parent) : undefined;
  const diff = parent ? envDiff(parent.env, cell.env) : [];
  return `${cell.id} ${cell.lane.name}${diff.length ? ` (${diff.join(', ')} vs ${parent!.id})` : ''}`;
}

/**
 * Where a cell made from another came from, in words: "re-run of c1", "phase 2 after c1", and for
 * an env edit what was set ("NSA_FOO=bar set on c1", "NSA_USE_FA2 unset on c1"): the one-key toggle
 * and a typed value are both recorded as `toggle`, and "toggle of c1" says neither which nor what.
 */
export function originOf(cell: Cell, nb: Pick<Notebook, 'cells'>): string | null {
  if (!cell.parent || cell.bisect) return null;
  if (cell.link === 'rerun') return `re-run of ${cell.parent}`;
  if (cell.link === 'phase') return `phase ${(cell.phase ?? 0) + 1} after ${cell.parent}`;
  const parent = nb.cells.find((c) => c.id === cell.parent);
  if (!parent) return `made from ${cell.parent}`;
  const diff = envDiff(parent.env, cell.env);
  const set = diff.filter((d) => !d.startsWith('-'));
  const unset = diff.filter((d) => d.startsWith('-')).map((d) => d.slice(1));
  const what = [
    ...(set.length ? [`${set.join(', ')} set`] : []),
    ...(unset.length ? [`${unset.join(', ')} unset`] : []),
  ];
  return what.length ? `${what.join(' and ')} on ${cell.parent}` : `the env of ${cell.parent}, unchanged`;
}

type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null;

/** the entries of a list in the cell's analysis that pass `ok` (another nsa-dbg may have written it) */
export function analysisList<T = Obj>(c: Cell, key: string, ok: (x: Obj) => boolean): T[] {
  const list = c.analysis?.[key];
  return Array.isArray(list) ? (list.filter((x) => isObj(x) && ok(x)) as T[]) : [];
}

/** stopped by the user before it had a verdict: not judged either way */
export const stoppedByUser = (c: Cell) => c.state === 'done' && c.verdict === 'stopped';

/** a cell whose GO/NO-GO counts: it ran to its verdict */
export const judged = (c: Cell) => c.state === 'done' && !stoppedByUser(c);

/** the lane's throughput target, when the cell's median fell short of it */
export function belowTarget(c: Cell): { toks: number; target: number } | null {
  const target = c.lane.target?.toksPerS;
  const toks = c.summary?.medianToksPerS;
  return target !== undefined && toks != null && toks < target ? { toks, target } : null;
}

/** a GO that needs a second look: slow (the verdict) or below its lane's target */
export function slowGo(c: Cell): string | null {
  if (!c.go || !judged(c)) return null;
  const parts: string[] = [];
  // the reason reads "slow: 3 steps, …": the word is said by whoever shows this
  if (c.verdict === 'slow')
    parts.push(shortPaths(c.reasons?.join('; ') || c.summary?.line || 'slow').replace(/^slow:\s*/, ''));
  const below = belowTarget(c);
  if (below) parts.push(`${rateText(below.toks)} toks/s, below its lane's target of ${below.target}`);
  return parts.length ? parts.join('; ') : null;
}

/** the steps the cell ran: its command's `--steps`, else its lane's */
export function stepsOf(c: Cell): number | undefined {
  const i = c.command.lastIndexOf('--steps');
  const v = i >= 0 ? Number(c.command[i + 1]) : Number.NaN;
  return Number.isFinite(v) ? v : c.lane.steps;
}

/** "/home/u/nsa/core/nsa_attention.py:175" → "nsa_attention.py:175": summaries stay short */
export function shortPaths(text: string): string {
  return text.replace(/(?:[\w.~-]*\/)+([\w.-]+\.\w+)(?=:\d|\)|\s|$)/g, '$1');
}

/** "file:12 in fn: code" → "fn (file:12)" */
export function frameFn(frame: string): string {
  const m = /^(.*):(\d+) in ([^:]+)/.exec(frame);
  return m ? `${m[3]} (${m[1]!.split('/').pop()}:${m[2]})` : frame;
}

/** the failure in a few words: "hang at step 6 in _forward_prefill_sequential (nsa_attention.py:175)" */
export function failureOf(c: Cell): string {
  const s = c.summary;
  if (stoppedByUser(c)) return `stopped by the user at step ${s?.stepsReached ?? 0}, before its verdict`;
  if (!s) return c.state === 'running' ? 'still running' : 'no verdict';
  if (s.stall) {
    const top = c.excerpts?.dumpTop[0];
    return `hang at step ${s.stall.step} (${s.stall.where})${top ? ` in ${frameFn(top)}` : ''}`;
  }
  if (s.crash)
    return `crash at step ${s.crash.step}: ${s.crash.exception}${s.crash.message ? `: ${s.crash.message}` : ''}`;
  if (s.nan) return `non-finite loss at step ${s.nan.step}`;
  return shortPaths(c.reasons?.join('; ') || s.line);
}
