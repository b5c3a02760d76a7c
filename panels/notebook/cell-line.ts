/** One cell as a list row, and the parent diff: plain strings so views and tests share them. */

import { envDiff } from '../../src/notebook/env-diff.js';
import type { Cell } from '../../src/notebook/model.js';

export type Badge = { text: string; tone: 'ok' | 'bad' | 'warn' | 'muted' };

export function badge(c: Cell): Badge {
  if (c.state === 'running') return { text: 'RUN  ', tone: 'warn' };
  if (c.state === 'failed') return { text: 'ERROR', tone: 'bad' };
  if (c.verdict === 'stopped') return { text: 'STOP ', tone: 'warn' };
  return c.go ? { text: 'GO   ', tone: 'ok' } : { text: 'NO-GO', tone: 'bad' };
}

/**
 * The detail line's judgement, worded like the badge: a GO keeps its word even with reasons (a
 * slow GO says "GO, slow: …"), a NO-GO lists why, a stopped cell says it was stopped.
 */
export function detailVerdict(c: Cell): string | null {
  if (c.state === 'running') return null;
  const why = (c.reasons ?? []).join('; ');
  if (c.state === 'failed') return `ERROR: the run failed before a verdict${why ? `: ${why}` : ''}`;
  if (c.verdict === 'stopped') return `STOPPED before its verdict${why ? `: ${why}` : ''}`;
  if (c.go) return why ? `GO, ${why}` : null;
  return `NO-GO: ${why || c.summary?.line || c.verdict || 'no verdict'}`;
}

/** "toggle of c1: NSA_PREFILL_BATCHED=1" */
export function parentDiff(c: Cell, cells: readonly Cell[]): string {
  if (!c.parent) return '';
  const p = cells.find((x) => x.id === c.parent);
  const how = c.link === 'phase' ? `phase ${(c.phase ?? 0) + 1} after` : `${c.link ?? 'from'} of`;
  if (!p) return `${how} ${c.parent} (deleted)`;
  const d = envDiff(p.env, c.env);
  return `${how} ${p.id}${d.length ? `: ${d.join(' ')}` : ''}`;
}

export function verdictText(c: Cell): string {
  if (c.state === 'running') return 'running…';
  return c.summary?.line ?? c.verdict ?? c.state;
}
