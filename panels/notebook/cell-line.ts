/** One cell as a list row, and the parent diff: plain strings so views and tests share them. */

import { checkLine } from '../../src/notebook/check-cell.js';
import { envDiff } from '../../src/notebook/env-diff.js';
import { keyOf } from '../../src/notebook/keymap.js';
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
  // a check cell's fail and warn lines are listed one by one (checkDetail)
  if (c.kind === 'check' && c.check) return null;
  const why = (c.reasons ?? []).join('; ');
  if (c.kind === 'check') return `ERROR: the box check gave no verdict${why ? `: ${why}` : ''}`;
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
  if (c.kind === 'check') return `${how} ${p.id}`;
  const d = envDiff(p.env, c.env);
  return `${how} ${p.id}${d.length ? `: ${d.join(' ')}` : ''}`;
}

export function verdictText(c: Cell): string {
  if (c.kind === 'check') return checkLine(c);
  if (c.state === 'running') return 'running…';
  return c.summary?.line ?? c.verdict ?? c.state;
}

const TAG = { pass: 'PASS', warn: 'WARN', fail: 'FAIL', skip: 'SKIP' } as const;

/**
 * A check cell's detail: its fail lines, then its warn lines, each with the measured value, the
 * expected one and its source; at most `max` of them, then how many more.
 */
export function checkDetail(c: Cell, max: number): string[] {
  const boxes = c.check?.boxes ?? [];
  const many = boxes.length > 1;
  const lines = (status: 'fail' | 'warn') =>
    boxes.flatMap((b) =>
      b.checks
        .filter((k) => k.status === status)
        .map(
          (k) =>
            `${TAG[status]} ${many ? `${b.host}: ` : ''}${k.gpu === undefined ? '' : `GPU ${k.gpu} `}${k.name}: ${k.measured} (expected ${k.expected}; ${k.source})`,
        ),
    );
  const all = [...lines('fail'), ...lines('warn')];
  if (all.length <= max) return all;
  return [
    ...all.slice(0, max - 1),
    `… ${all.length - max + 1} more (${keyOf('report')} writes them all into the report)`,
  ];
}
