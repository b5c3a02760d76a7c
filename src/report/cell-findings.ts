/**
 * A cell's slow steps and dumps as the report says them, summarised like `analyze` says them
 * (src/analysis/slow-groups.ts): the routine grouped, the finding first. Read from the analysis
 * the cell keeps, which a newer or older nsa-dbg may have written: anything malformed is left out.
 */

import { frameless, type LastWordsReport } from '../analysis/last-words.js';
import type { DumpReport } from '../analysis/result.js';
import {
  type DumpGroup,
  groupDumps,
  moreText,
  slowGroupText,
  slowStepText,
  summariseSlowSteps,
} from '../analysis/slow-groups.js';
import type { SlowStep } from '../analysis/step-stats.js';
import { type StragglerRank, stragglerText } from '../analysis/straggler.js';
import type { Cell } from '../notebook/model.js';
import { rankSetText } from '../util/rank-set.js';
import { analysisList } from './cells.js';

/** slow steps a cell's line spells out, the longest first; the rest are counted */
const MAX_SLOW = 3;

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

const slowStepsOf = (c: Cell) =>
  analysisList<SlowStep>(
    c,
    'slowSteps',
    (s) => isNum(s.rank) && isNum(s.step) && isNum(s.seconds) && isNum(s.medianSeconds),
  );

/** "step 572 … 17.7 s (median 0.1 s); 7 evaluations, 0.3–0.4 s, every 50 steps (…)", or null */
export function slowStepsLine(c: Cell): string | null {
  const { findings, groups } = summariseSlowSteps(slowStepsOf(c), c.excerpts?.causes);
  const parts = [
    ...findings.slice(0, MAX_SLOW).map(slowStepText),
    ...(findings.length > MAX_SLOW ? [moreText(findings.slice(MAX_SLOW))] : []),
    ...groups.map(slowGroupText),
  ];
  return parts.length ? parts.join('; ') : null;
}

/** the cell's dumps, identical ones together */
export function cellDumps(c: Cell): DumpGroup[] {
  return groupDumps(analysisList<DumpReport>(c, 'dumps', (d) => typeof d.file === 'string'));
}

/**
 * The cell's last words (where each rank was when a signal ended it), one line per place: "ranks
 * 0 and 1 — SIGTERM at 14:26:16 UTC: waiting in all_reduce (distributed_c10d.py:1541)". Empty when
 * there are none: the report then has no such section.
 */
export function lastWordsLines(c: Cell): string[] {
  const groups = new Map<string, { ranks: number[]; w: LastWordsReport }>();
  for (const w of analysisList<LastWordsReport>(c, 'lastWords', (x) => typeof x.rank === 'number')) {
    const t = w.mainThreadTop;
    const place =
      t === null
        ? frameless(w)
        : `${w.waiting ? 'waiting in' : 'in'} ${t.function} (${t.file.split('/').pop()}:${t.line})`;
    const at = typeof w.at === 'number' ? ` at ${new Date(w.at * 1000).toISOString().slice(11, 19)} UTC` : '';
    const key = `${w.signal}${at}: ${place}`;
    const g = groups.get(key) ?? { ranks: [], w };
    g.ranks.push(w.rank);
    groups.set(key, g);
  }
  return [...groups].map(([key, g]) => `${rankSetText(g.ranks)} — ${g.w.fatal ? 'died of ' : ''}${key}`);
}

/** ranks whose straggler score the report spells out, least waiting first */
const SCORES_LISTED = 8;

/** files of one kind named more often than this are one entry: `heartbeat_rank*.jsonl` (512 files) */
const LISTED_PER_KIND = 16;

/**
 * A cell's evidence files, in order: each name, except that names which differ only in their
 * numbers (a rank's, a pid's, a second's) are one entry once there are more than 16 of them, so a
 * run of 512 ranks lists a few kinds of file, not a thousand names.
 */
export function evidenceFilesText(files: readonly string[]): string {
  const kindOf = (f: string) => f.replace(/\d+/g, '*');
  const counts = new Map<string, number>();
  for (const f of files) counts.set(kindOf(f), (counts.get(kindOf(f)) ?? 0) + 1);
  const out: string[] = [];
  const said = new Set<string>();
  for (const f of files) {
    const kind = kindOf(f);
    const n = counts.get(kind) ?? 0;
    if (n <= LISTED_PER_KIND) out.push(`\`${f}\``);
    else if (!said.has(kind)) {
      said.add(kind);
      out.push(`\`${kind}\` (${n} files)`);
    }
  }
  return out.join(', ');
}

/**
 * The cell's straggler ranking (stack samples taken while it trained): the finding in one line, then
 * each rank's score, least waiting first. Empty when no rank was sampled (a single rank, an old cell).
 */
export function stragglerLines(c: Cell): string[] {
  const ranks = analysisList<StragglerRank>(
    c,
    'stragglers',
    (r) => typeof r.rank === 'number' && typeof r.score === 'number',
  );
  const head = stragglerText(ranks);
  if (head === null) return [];
  const sorted = [...ranks].sort((a, b) => b.score - a.score || a.rank - b.rank);
  // the least waiting few, then one line for the rest: the section does not grow with the job
  const shown = sorted.slice(0, SCORES_LISTED);
  const rest = sorted.slice(SCORES_LISTED);
  const rows = shown.map(
    (r) =>
      `rank ${r.rank}${r.node ? ` (${r.node})` : ''}: score ${r.score.toFixed(2)}, waiting in ${Math.round(r.waitShare * 100)} % of ${r.samples} samples${r.named ? ' — the straggler' : ''}`,
  );
  if (rest.length > 0)
    rows.push(
      `${rankSetText(rest.map((r) => r.rank))}: scores ${rest.at(-1)!.score.toFixed(2)}–${rest[0]!.score.toFixed(2)}`,
    );
  return [head, ...rows];
}
