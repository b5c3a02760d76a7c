/**
 * The report's chart: loss and toks/s per step, one line per shown cell on shared axes, each cell
 * its own colour (and dash pattern past the palette), a marker where a run hung, crashed, went NaN
 * or was stopped, nice ticks, axis titles, one legend under the panels that names what each cell
 * ran (a bisection's trials share a lane: their changes tell them apart). Runs with the same
 * numbers (a bisection's trials that hung alike) would draw one curve over the other: each repeat is
 * dashed and lifted a little, and the legend says whose curve it repeats. When the runs differ in length by 10× or
 * more the step axis is logarithmic, so a 5-step run is not squeezed into 2 % of a 200-step axis.
 * Plain SVG text with fixed number formatting: the same notebook gives the same bytes.
 */
import type { Cell, Series } from '../notebook/model.js';
import { stoppedByUser } from './cells.js';
import { type Axis, fraction, logAxis, niceAxis } from './svg-scale.js';

/** Okabe-Ito (yellow left out: unreadable on white), then Tol's wine, olive and teal */
export const SVG_COLOURS = [
  '#0072B2',
  '#D55E00',
  '#009E73',
  '#CC79A7',
  '#E69F00',
  '#56B4E9',
  '#000000',
  '#882255',
  '#999933',
  '#44AA99',
];
/** past the palette the lines are told apart by dashes */
const DASHES = ['', '6 3', '2 2', '8 3 2 3'];
/** a curve that repeats another's numbers: dashed so the one under it shows through */
const REPEAT_DASHES = ['6 3', '2 2', '8 3 2 3', '4 2 1 2'];
/** and lifted this many pixels per repeat, so it does not sit exactly on the one under it */
const REPEAT_LIFT = 1.5;
/** runs whose lengths differ by this much get a log step axis */
const LOG_RATIO = 10;

const W = 820;
const PANEL_H = 240;
const LEFT = 70;
const RIGHT = 20;
const TOP = 30;
const BOTTOM = 46;
const PLOT_W = W - LEFT - RIGHT;
const PLOT_H = PANEL_H - TOP - BOTTOM;
const LEGEND_ROW = 16;
/** legend rows at most; past them one row counts the rest */
const LEGEND_ROWS = 24;
/** characters of a legend label (about the width of the chart at 11 px) */
const LABEL_CHARS = 110;

const f1 = (v: number) => (Math.round(v * 10) / 10).toFixed(1);
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export type EndKind = 'hang' | 'crash' | 'NaN' | 'stopped';

interface Line {
  cell: Cell;
  /** what the legend calls it */
  label: string;
  colour: string;
  dash: string;
  /** pixels the curve is lifted by (a repeat of another's numbers) */
  lift: number;
  /** whose curve this one repeats: "same curve as c1" */
  same: string | null;
  end: { kind: EndKind; step: number } | null;
}

/** where and how a run ended early, for its marker */
export function endOf(c: Cell): Line['end'] {
  const s = c.summary;
  if (!s) return null;
  if (s.stall) return { kind: 'hang', step: s.stall.step };
  if (s.crash) return { kind: 'crash', step: s.crash.step };
  if (s.nan) return { kind: 'NaN', step: s.nan.step };
  if (stoppedByUser(c)) return { kind: 'stopped', step: s.stepsReached };
  return null;
}

const dashAttr = (l: Line) => (l.dash ? ` stroke-dasharray="${l.dash}"` : '');
const finite = (s: Series) => s.filter((p) => Number.isFinite(p[0]) && Number.isFinite(p[1]));

function stepAxis(lines: Line[]): Axis {
  const ends = lines.flatMap((l) => {
    const pts = [...finite(l.cell.series.loss), ...finite(l.cell.series.toks)];
    const last = Math.max(...pts.map((p) => p[0]), l.end?.step ?? Number.NEGATIVE_INFINITY);
    return Number.isFinite(last) ? [last] : [];
  });
  if (ends.length === 0) return niceAxis(0, 1, 5, { integer: true });
  const hi = Math.max(...ends);
  const shortest = Math.max(1, Math.min(...ends));
  return hi / shortest >= LOG_RATIO ? logAxis(hi) : niceAxis(0, hi, 6, { integer: true });
}

function marker(kind: EndKind, x: number, y: number, colour: string): string {
  switch (kind) {
    case 'hang':
      return `<rect x="${f1(x - 4)}" y="${f1(y - 4)}" width="8" height="8" fill="#fff" stroke="${colour}" stroke-width="2"/>`;
    case 'crash':
      return `<path d="M${f1(x - 4)},${f1(y - 4)} L${f1(x + 4)},${f1(y + 4)} M${f1(x - 4)},${f1(y + 4)} L${f1(x + 4)},${f1(y - 4)}" stroke="${colour}" stroke-width="2.5"/>`;
    case 'NaN':
      return `<path d="M${f1(x)},${f1(y - 5)} L${f1(x + 5)},${f1(y + 4)} L${f1(x - 5)},${f1(y + 4)} Z" fill="${colour}"/>`;
    case 'stopped':
      return `<rect x="${f1(x - 4)}" y="${f1(y - 4)}" width="8" height="8" fill="${colour}"/>`;
  }
}

function panel(
  title: string,
  y0: number,
  lines: Line[],
  pick: (c: Cell) => Series,
  xAxis: Axis,
  fromZero: boolean,
): string[] {
  const plotTop = y0 + TOP;
  const out = [
    `<text x="${LEFT}" y="${y0 + 18}" font-weight="bold">${esc(title)} per step</text>`,
    `<rect x="${LEFT}" y="${plotTop}" width="${PLOT_W}" height="${PLOT_H}" fill="none" stroke="#999"/>`,
  ];
  const ys = lines.flatMap((l) => finite(pick(l.cell)).map((p) => p[1]));
  const sx = (x: number) => LEFT + fraction(xAxis, x) * PLOT_W;
  for (const t of xAxis.ticks)
    out.push(
      `<line x1="${f1(sx(t))}" y1="${plotTop}" x2="${f1(sx(t))}" y2="${plotTop + PLOT_H}" stroke="#eee"/>`,
      `<text x="${f1(sx(t))}" y="${plotTop + PLOT_H + 15}" text-anchor="middle" font-size="11">${t.toFixed(xAxis.decimals)}</text>`,
    );
  out.push(
    `<text x="${LEFT + PLOT_W / 2}" y="${plotTop + PLOT_H + 34}" text-anchor="middle" font-size="12">${xAxis.log ? 'step (log scale)' : 'step'}</text>`,
    `<text transform="translate(16 ${f1(plotTop + PLOT_H / 2)}) rotate(-90)" text-anchor="middle" font-size="12">${esc(title)}</text>`,
  );
  if (ys.length === 0) {
    out.push(`<text x="${LEFT + 10}" y="${plotTop + 20}" fill="#666">no data</text>`);
    return out;
  }
  const lo = Math.min(...ys);
  const hi = Math.max(...ys);
  // throughput reads against zero; loss against its own range
  const yAxis = niceAxis(fromZero ? Math.min(0, lo) : lo, hi, 5);
  const sy = (y: number) => plotTop + PLOT_H - fraction(yAxis, y) * PLOT_H;
  // a repeat is drawn lifted, its marker too, so both curves and both markers show
  const syOf = (l: Line) => (y: number) => sy(y) - l.lift;
  for (const t of yAxis.ticks)
    out.push(
      `<line x1="${LEFT}" y1="${f1(sy(t))}" x2="${LEFT + PLOT_W}" y2="${f1(sy(t))}" stroke="#eee"/>`,
      `<text x="${LEFT - 6}" y="${f1(sy(t) + 4)}" text-anchor="end" font-size="11">${t.toFixed(yAxis.decimals)}</text>`,
    );
  const labelled = new Set<string>();
  const boxes: Array<[number, number, number]> = [];
  for (const l of lines) {
    const pts = finite(pick(l.cell));
    const ly0 = syOf(l);
    if (pts.length === 1)
      out.push(`<circle cx="${f1(sx(pts[0]![0]))}" cy="${f1(ly0(pts[0]![1]))}" r="3" fill="${l.colour}"/>`);
    else if (pts.length > 1)
      out.push(
        `<polyline fill="none" stroke="${l.colour}" stroke-width="1.6"${dashAttr(l)} points="${pts.map(([x, y]) => `${f1(sx(x))},${f1(ly0(y))}`).join(' ')}"/>`,
      );
    if (!l.end) continue;
    // the marker sits at the step the run ended in, level with its last value (on the axis without one)
    const last = pts[pts.length - 1];
    const x = sx(Math.max(l.end.step, xAxis.log ? 1 : xAxis.lo));
    const y = last ? ly0(last[1]) : plotTop + PLOT_H - l.lift;
    if (last && l.end.step > last[0])
      out.push(
        `<line x1="${f1(sx(last[0]))}" y1="${f1(y)}" x2="${f1(x)}" y2="${f1(y)}" stroke="${l.colour}" stroke-width="1" stroke-dasharray="2 2"/>`,
      );
    out.push(marker(l.end.kind, x, y, l.colour));
    // one label per place: identical runs (a bisection's trials) would print it on top of itself
    const at = `${Math.round(x)},${Math.round(y + l.lift)},${l.end.kind}`;
    if (!labelled.has(at)) {
      labelled.add(at);
      // a label that would cover another one moves down a line (a stop and a hang a step apart)
      const w = l.end.kind.length * 6;
      const covered = (top: number) =>
        boxes.some(([bx, by, bw]) => x + 7 < bx + bw && bx < x + 7 + w && Math.abs(by - top) < 11);
      let ly = y - 6;
      for (let i = 0; i < 4 && covered(ly); i++) ly += 12;
      boxes.push([x + 7, ly, w]);
      out.push(`<text x="${f1(x + 7)}" y="${f1(ly)}" font-size="10" fill="${l.colour}">${l.end.kind}</text>`);
    }
  }
  return out;
}

/** a label cut to the legend's width, the cut marked */
const cut = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);

/** the legend under the panels: one row a cell, what it ran, how it ended, whose curve it repeats */
function legend(lines: Line[], y0: number): string[] {
  const x0 = LEFT;
  const out = [`<text x="${x0}" y="${y0 + 14}" font-weight="bold">cells</text>`];
  const shown = lines.length > LEGEND_ROWS ? lines.slice(0, LEGEND_ROWS - 1) : lines;
  shown.forEach((l, i) => {
    const y = y0 + 34 + i * LEGEND_ROW;
    const data = l.cell.series.loss.length + l.cell.series.toks.length > 0;
    const end = l.end ? ` · ${l.end.kind} @${l.end.step}` : data ? '' : ' · no steps';
    const same = l.same ? ` · ${l.same}` : '';
    const tail = `${end}${same}`;
    out.push(
      `<line x1="${x0}" y1="${y - 4}" x2="${x0 + 22}" y2="${y - 4}" stroke="${l.colour}" stroke-width="3"${dashAttr(l)}/>`,
      ...(l.end ? [marker(l.end.kind, x0 + 11, y - 4, l.colour)] : []),
      `<text x="${x0 + 30}" y="${y}" font-size="11">${esc(cut(l.label, LABEL_CHARS - tail.length))}${esc(tail)}</text>`,
    );
  });
  if (shown.length < lines.length)
    out.push(
      `<text x="${x0}" y="${y0 + 34 + shown.length * LEGEND_ROW}" font-size="11" fill="#666">+${lines.length - shown.length} more cells</text>`,
    );
  return out;
}

/** the same numbers, point for point */
const sameSeries = (a: Series, b: Series) =>
  a.length === b.length && a.every((p, i) => p[0] === b[i]![0] && p[1] === b[i]![1]);

/**
 * Lines of the shown cells. Colours by position among them, so no two share one. A cell whose loss
 * and toks/s are an earlier one's throughout (a bisection's trials that hung alike) would hide it:
 * it is that curve's repeat, dashed and lifted a little (each repeat its own dash and height), and
 * the legend says whose curve it is.
 */
function linesOf(cells: Cell[], labels: string[] | undefined): Line[] {
  const repeats = new Map<string, number>();
  return cells.map((cell, i) => {
    const data = cell.series.loss.length + cell.series.toks.length > 0;
    const same = (p: Cell) =>
      sameSeries(p.series.loss, cell.series.loss) && sameSeries(p.series.toks, cell.series.toks);
    const first = data ? cells.slice(0, i).find(same) : undefined;
    const k = first ? (repeats.get(first.id) ?? 0) + 1 : 0;
    if (first) repeats.set(first.id, k);
    return {
      cell,
      label: labels?.[i] ?? `${cell.id} ${cell.lane.name}`,
      colour: SVG_COLOURS[i % SVG_COLOURS.length]!,
      dash:
        k > 0
          ? REPEAT_DASHES[(k - 1) % REPEAT_DASHES.length]!
          : DASHES[Math.floor(i / SVG_COLOURS.length) % DASHES.length]!,
      lift: k * REPEAT_LIFT,
      same: first ? `same curve as ${first.id}` : null,
      end: endOf(cell),
    };
  });
}

/** `labels`: what the legend calls each cell (the report's configuration names); default id and lane */
export function renderSvg(cells: Cell[], title: string, labels?: string[]): string {
  const lines = linesOf(cells, labels);
  const legendTop = PANEL_H * 2 + 10;
  const h = legendTop + 30 + Math.min(lines.length, LEGEND_ROWS) * LEGEND_ROW;
  const xAxis = stepAxis(lines);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${h}" viewBox="0 0 ${W} ${h}" font-family="sans-serif" font-size="12">`,
    `<title>${esc(title)}</title>`,
    `<rect width="${W}" height="${h}" fill="#fff"/>`,
    ...panel('loss', 0, lines, (c) => c.series.loss, xAxis, false),
    ...panel('toks/s', PANEL_H + 10, lines, (c) => c.series.toks, xAxis, true),
    ...legend(lines, legendTop),
    '</svg>',
    '',
  ].join('\n');
}
