/**
 * The platform's box check in the report: for each box (target) the newest check cell's verdict
 * and its fail and warn lines, each with the measured value, the expected one and its source.
 * Nothing when no box was checked.
 */
import { checkCounts, latestChecks } from '../notebook/check-cell.js';
import type { Cell } from '../notebook/model.js';
import { sanitizeText } from '../util/ansi.js';

export interface BoxCheckReport {
  target: string;
  cellId: string;
  lane: string;
  /** 'GO', 'NO-GO', or 'no verdict' (the check could not run) */
  verdict: string;
  /** when the check ended (ISO) */
  at: string;
  failed: number;
  warnings: number;
  passed: number;
  /** `fail: …` lines, then `warn: …` lines; or why there is no verdict */
  lines: string[];
}

function linesOf(c: Cell): string[] {
  if (!c.check) return (c.reasons ?? []).map((r) => `no verdict: ${r}`);
  const many = c.check.boxes.length > 1;
  const of = (status: 'fail' | 'warn') =>
    c.check!.boxes.flatMap((b) =>
      b.checks
        .filter((k) => k.status === status)
        .map(
          (k) =>
            `${status}: ${many ? `${b.host}: ` : ''}${k.gpu === undefined ? '' : `GPU ${k.gpu} `}${k.name}: ${k.measured} (expected ${k.expected}; ${k.source})`,
        ),
    );
  return [...of('fail'), ...of('warn')].map(sanitizeText);
}

export function boxChecksOf(cells: readonly Cell[]): BoxCheckReport[] {
  return latestChecks(cells).map((c) => {
    const n = checkCounts(c);
    return {
      target: c.target,
      cellId: c.id,
      lane: c.lane.name,
      verdict: c.check ? (c.go ? 'GO' : 'NO-GO') : 'no verdict',
      at: c.ended ?? c.started ?? c.created,
      failed: n.fail,
      warnings: n.warn,
      passed: n.pass,
      lines: linesOf(c),
    };
  });
}

/** the header's line for each checked box */
export function boxCheckHeader(b: BoxCheckReport): string {
  const counts =
    b.verdict === 'no verdict' ? '' : `: ${b.failed} failed, ${b.warnings} warning(s), ${b.passed} passed`;
  // `2026-11-26 14:30 UTC`
  const when = `${b.at.slice(0, 10)} ${b.at.slice(11, 16)} UTC`;
  return `**Box check** \`${sanitizeText(b.target)}\`: **${b.verdict}** (${b.cellId}, lane \`${b.lane}\`, ${when}${counts})  `;
}

/** the section listing each checked box's fail and warn lines (none when no box was checked) */
export function boxCheckSection(boxes: readonly BoxCheckReport[]): string[] {
  if (boxes.length === 0) return [];
  return [
    '## Platform Check',
    '',
    ...boxes.flatMap((b) => [
      `### \`${sanitizeText(b.target)}\`: ${b.verdict} (${b.cellId}, lane \`${b.lane}\`)`,
      '',
      ...(b.lines.length ? b.lines.map((l) => `- ${l}`) : ['- every check passed']),
      '',
    ]),
  ];
}
