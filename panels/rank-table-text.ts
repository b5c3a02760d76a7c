/**
 * Text of the per-rank table (RankTable.tsx): the row order (the root-cause rank first), the
 * columns, and the stack diff's lines. Pure, so the layout can count the table's height.
 */
import type { ManyRanks, RankRow } from '../src/analysis/rank-table.js';
import type { Frame } from '../src/ingest/events.js';
import type { RankView } from '../src/session/state.js';
import { rateText } from '../src/util/rate.js';
import { formatSeconds, padCut, shortenPath } from './format.js';
import { stallPhrases } from './HeartbeatPanel.js';

export const RANK_HEADER = 'rank  step   lag  s/step  toks/s  strag  score  beat    st cpu%  stack';
/** a multi-node run's rows start with the node and the rank on it */
const NODE_WIDTH = 10;
export const NODE_HEADER = `${'node'.padEnd(NODE_WIDTH)} lr `;

/** the run spans nodes (its rows know where each rank runs) */
export const byNode = (many: ManyRanks) => many.rows.some((r) => r.node !== undefined);

export function rankHeader(many: ManyRanks): string {
  return byNode(many) ? `${NODE_HEADER}${RANK_HEADER}` : RANK_HEADER;
}

/**
 * the rows in the order shown: grouped by node when the run spans nodes (the root-cause rank is
 * marked there, not moved out of its node); else the root-cause rank first, then by rank
 */
export function orderedRows(many: ManyRanks): RankRow[] {
  if (byNode(many)) return many.rows;
  const cause = many.rootCause?.rank;
  return [...many.rows].sort(
    (a, b) => Number(b.rank === cause) - Number(a.rank === cause) || a.rank - b.rank,
  );
}

/** nodes whose every rank is silent while another node's ranks are not: a lost host, a dead agent */
export function silentNodes(many: ManyRanks, ranks: readonly RankView[]): string[] {
  const silent = new Set(ranks.filter((r) => r.stall).map((r) => r.rank));
  const nodes = new Map<string, boolean>();
  for (const r of many.rows) {
    if (r.node === undefined) continue;
    nodes.set(r.node, (nodes.get(r.node) ?? true) && silent.has(r.rank));
  }
  const all = [...nodes.values()];
  if (all.every(Boolean)) return [];
  return [...nodes.entries()].filter(([, s]) => s).map(([n]) => n);
}

/** A, B, … per stack group (biggest first), `-` for a rank that gave no dump */
export function stackLetters(many: ManyRanks): Map<number, { letter: string; odd: boolean }> {
  const out = new Map<number, { letter: string; odd: boolean }>();
  const d = many.stackDiff;
  if (d === null) return out;
  d.groups.forEach((g, i) => {
    for (const r of g.ranks) out.set(r, { letter: String.fromCharCode(65 + (i % 26)), odd: g.odd });
  });
  for (const r of [...d.noDump, ...d.stopped]) out.set(r, { letter: '-', odd: false });
  return out;
}

const fmtNum = (v: number | null, digits: number) => (v === null ? '–' : v.toFixed(digits));
function fmtToks(v: number | null): string {
  if (v === null) return '–';
  return v >= 10_000 ? `${(v / 1000).toFixed(1)}k` : rateText(v);
}

/** one row's columns before the stack letter (the trainer-supplied parts are numbers only) */
export function rowText(r: RankRow, view: RankView | undefined, cause: boolean): string {
  const lag = r.lag === 0 ? '0' : `-${r.lag}`;
  const node =
    r.node === undefined ? '' : `${padCut(r.node, NODE_WIDTH)} ${String(r.localRank ?? '?').padStart(2)} `;
  return `${node}${[
    `${cause ? '>' : ' '}r${r.rank}`.padEnd(5),
    String(r.step).padStart(5),
    lag.padStart(5),
    (r.stepTimeS === null ? '–' : formatSeconds(r.stepTimeS)).padStart(7),
    fmtToks(r.toksPerS).padStart(7),
    fmtNum(r.straggler, 2).padStart(6),
    // the stack samples' score; `*` on the rank named the straggler
    `${fmtNum(r.score, 2)}${r.namedStraggler ? '*' : ' '}`.padStart(6),
    formatSeconds(view?.lastBeatAgeS).padStart(6),
    (r.procState ?? '–').padStart(5),
    (r.cpuPct === null ? '–' : `${Math.round(r.cpuPct)}%`).padStart(5),
  ].join(' ')}`;
}

/** `0-6` for consecutive ranks, `0,2,5` otherwise */
export function rankList(ranks: readonly number[]): string {
  const s = [...ranks].sort((a, b) => a - b);
  const runs: string[] = [];
  for (let i = 0; i < s.length; ) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j]! + 1) j++;
    runs.push(j > i + 1 ? `${s[i]}-${s[j]}` : j === i + 1 ? `${s[i]},${s[j]}` : `${s[i]}`);
    i = j + 1;
  }
  return `r${runs.join(',')}`;
}

const at = (f: Frame | undefined | null) =>
  f ? `${f.function} ${shortenPath(f.file, 2)}:${f.line}` : 'no frame';

export interface DiffLine {
  text: string;
  odd: boolean;
}

/** one line per stack group (and one for the ranks that gave no dump) */
export function diffLines(many: ManyRanks): DiffLine[] {
  const d = many.stackDiff;
  if (d === null) return [];
  const lines = d.groups.map((g, i) => {
    // a waiting group: where it waits (the collective); the others: the user's own frame
    const top = g.frames[g.frames.length - 1];
    const where = at(g.inCollective ? top : (g.userTop ?? top));
    const tags = [g.inCollective ? 'in collective' : '', g.odd ? 'ODD ONE OUT' : ''].filter(Boolean);
    return {
      text: `${String.fromCharCode(65 + (i % 26))} ${rankList(g.ranks)}: ${where}${tags.length ? ` (${tags.join(', ')})` : ''}`,
      odd: g.odd,
    };
  });
  if (d.noDump.length > 0)
    lines.push({ text: `- ${rankList(d.noDump)}: no dump (blocked outside Python)`, odd: false });
  if (d.stopped.length > 0)
    lines.push({
      text: `- ${rankList(d.stopped)}: no dump (stopped, state T: signals wait for SIGCONT)`,
      odd: false,
    });
  return lines;
}

/** most stack diff lines the table shows (the rest are summarised in the last one) */
export const MAX_DIFF_LINES = 3;

/** the banner under the header: the root cause, else the first silent rank's HANG/SUSPECT phrases */
export function bannerOf(many: ManyRanks, ranks: readonly RankView[]): string[] | null {
  if (many.rootCause) {
    const node = many.rows.find((r) => r.rank === many.rootCause?.rank)?.node;
    return [`ROOT CAUSE rank ${many.rootCause.rank}${node ? ` on ${node}` : ''}`, many.rootCause.why];
  }
  const lost = silentNodes(many, ranks);
  if (lost.length > 0)
    return [
      lost.length === 1
        ? `NODE ${lost[0]} SILENT AS A WHOLE`
        : `${lost.length} NODES (${lost.slice(0, 3).join(', ')}${lost.length > 3 ? ', …' : ''}) SILENT AS A WHOLE`,
      'every rank there stopped beating: lost host or dead agent?',
    ];
  const silent = ranks.find((r) => r.stall);
  return silent ? stallPhrases(silent) : null;
}

/** rows the table needs: header, banner, ranks (capped), diff lines */
export function rankTableNeed(many: ManyRanks, ranks: readonly RankView[], maxRanks: number): number {
  const shown = Math.min(many.rows.length, maxRanks) + (many.rows.length > maxRanks ? 1 : 0);
  const diff = Math.min(diffLines(many).length, MAX_DIFF_LINES);
  return 1 + (bannerOf(many, ranks) ? 1 : 0) + shown + diff;
}

export const NODE_SUMMARY_HEADER = `${'node'.padEnd(NODE_WIDTH)}  ranks        step      lag  slowest        silent  stacks`;

export interface NodeSummary {
  node: string;
  /** the root-cause rank runs here */
  culprit: boolean;
  text: string;
  /** a rank here is silent and checked as hung, or behind */
  tone: 'bad' | 'warn' | null;
  /** the node's rows, shown under its summary when it holds the culprit */
  rows: RankRow[];
  /** how far the node stands out: the culprit's, an odd stack, a hung rank, silence or lag */
  oddness: number;
}

/**
 * At many ranks across nodes, one row per node: its ranks, their steps (min–max), the worst lag,
 * the slowest rank's step time, how many of its ranks are silent, its stack groups; the culprit's
 * node first (its ranks listed under it), then the others in agent order.
 */
export function nodeSummaries(many: ManyRanks, ranks: readonly RankView[]): NodeSummary[] {
  const views = new Map(ranks.map((r) => [r.rank, r]));
  const letters = stackLetters(many);
  const byNodeRows = new Map<string, RankRow[]>();
  for (const r of many.rows) byNodeRows.set(r.node ?? '?', [...(byNodeRows.get(r.node ?? '?') ?? []), r]);
  const cause = many.rootCause?.rank;
  const out = [...byNodeRows].map(([node, rows]): NodeSummary => {
    const steps = rows.map((r) => r.step);
    const slow = rows.reduce<RankRow | null>(
      (a, r) => ((r.stepTimeS ?? -1) > (a?.stepTimeS ?? -1) ? r : a),
      null,
    );
    const silent = rows.filter((r) => views.get(r.rank)?.stall);
    const hung = silent.some((r) => views.get(r.rank)?.stall?.hang);
    const groups = [...new Set(rows.map((r) => letters.get(r.rank)?.letter).filter((l) => l !== undefined))];
    const culprit = rows.some((r) => r.rank === cause);
    const min = Math.min(...steps);
    const max = Math.max(...steps);
    const lag = Math.max(...rows.map((r) => r.lag));
    const text = [
      `${padCut(node, NODE_WIDTH)}${culprit ? '>' : ' '}`,
      rankList(rows.map((r) => r.rank)).padEnd(12),
      (min === max ? String(min) : `${min}-${max}`).padStart(9),
      (lag === 0 ? '0' : `-${lag}`).padStart(5),
      (slow?.stepTimeS == null ? '–' : `r${slow.rank} ${formatSeconds(slow.stepTimeS)}`).padStart(13),
      `${silent.length}/${rows.length}`.padStart(8),
      ` ${groups.join(' ') || '–'}`,
    ].join(' ');
    const odd = rows.some((r) => letters.get(r.rank)?.odd === true);
    return {
      node,
      culprit,
      text,
      tone: hung || culprit || odd ? 'bad' : silent.length > 0 ? 'warn' : null,
      rows,
      oddness: (culprit ? 8 : 0) + (odd ? 4 : 0) + (hung ? 2 : 0) + (silent.length > 0 || lag > 0 ? 1 : 0),
    };
  });
  // the odd ones out first (the culprit's node, a node with a stack unlike the others', one hung or
  // behind), then the rest in agent order: at 64 nodes the one that matters is on screen
  return out.sort((a, b) => b.oddness - a.oddness);
}

/** `+N more nodes (a, b, …)`, naming a few: the line never grows with the node count */
export function moreNodesText(cut: readonly NodeSummary[]): string {
  const named = cut.slice(0, 3).map((n) => n.node);
  const rest = cut.length - named.length;
  return `+${cut.length} more node${cut.length === 1 ? '' : 's'} (${named.join(', ')}${rest > 0 ? `, … ${rest} more` : ''})`;
}
