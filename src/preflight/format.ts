/**
 * `nsa-dbg check` as text: each check's status, what was measured, what was expected and where that
 * comes from, then GO / NO-GO with its reasons. Every value that came from the box is sanitised
 * before it is printed (a process name or an error message may carry escapes).
 */
import { sanitizeText } from '../util/ansi.js';
import type { Check } from './types.js';
import type { BoxCheck } from './verdict.js';

export interface CheckRun {
  go: boolean;
  verdict: 'GO' | 'NO-GO';
  lane: string;
  /** the whole check, connecting included */
  elapsedS: number;
  reasons: string[];
  boxes: BoxCheck[];
}

export function combine(lane: string, boxes: BoxCheck[], elapsedS: number): CheckRun {
  const go = boxes.length > 0 && boxes.every((b) => b.go);
  const many = boxes.length > 1;
  return {
    go,
    verdict: go ? 'GO' : 'NO-GO',
    lane,
    elapsedS: Math.round(elapsedS * 10) / 10,
    reasons: boxes.flatMap((b) => b.reasons.map((r) => (many ? `${b.host}: ${r}` : r))),
    boxes,
  };
}

const TAG = { pass: 'PASS', warn: 'WARN', fail: 'FAIL', skip: 'SKIP' } as const;

function checkLines(c: Check): string[] {
  const what = `${c.gpu === undefined ? '' : `GPU ${c.gpu} `}${c.name}`;
  return [
    `  ${TAG[c.status]}  ${sanitizeText(what)}: ${sanitizeText(c.measured)}`,
    `        expected ${sanitizeText(c.expected)} (${sanitizeText(c.source)})`,
  ];
}

export function formatCheckRun(run: CheckRun): string {
  const lines = run.boxes.flatMap((b) => [
    `${sanitizeText(b.host)}: lane ${b.lane}, probe ${b.probeS.toFixed(1)} s`,
    ...b.checks.flatMap(checkLines),
  ]);
  const fails = run.boxes.flatMap((b) => b.checks).filter((c) => c.status === 'fail').length;
  const warns = run.boxes.flatMap((b) => b.checks).filter((c) => c.status === 'warn').length;
  lines.push(
    `${run.verdict} lane ${run.lane}: ${fails} failed, ${warns} warning(s), ${run.elapsedS.toFixed(1)} s`,
  );
  for (const r of run.reasons) lines.push(`  ${sanitizeText(r)}`);
  return `${lines.join('\n')}\n`;
}
