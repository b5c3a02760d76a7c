/**
 * The report's chart: loss and toks/s per step, one line per shown cell on shared axes, each cell
 * its own colour (and dash pattern past the palette), a marker where a run hung, crashed, went NaN
 * or was stopped, nice ticks, axis titles, one legend. When the runs differ in length by 10× or
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
/** runs whose lengths differ by this much get a log step axis */
const LOG_RATIO = 10;

const W = 820;
const PANEL_H = 240;
const LEFT = 70;
const LEGEND_W = 230;
const TOP = 30;
const BOTTOM = 46;
const PLOT_W = W - LEFT - LEGEND_W;
const PLOT_H = PANEL_H - TOP - BOTTOM;

const f1 = (v: number) => (Math.round(v * 10) / 10).toFixed(1);
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export type EndKind = 'hang' | 'crash' | 'NaN' | 'stopped';

interface Line {
  cell: Cell;
  colour: string;
  dash: string;
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
  for (const t of yAxis.ticks)
    out.push(
      `<line x1="${LEFT}" y1="${f1(sy(t))}" x2="${LEFT + PLOT_W}" y2="${f1(sy(t))}" stroke="#eee"/>`,
      `<text x="${LEFT - 6}" y="${f1(sy(t) + 4)}" text-anchor="end" font-size="11">${t.toFixed(yAxis.decimals)}</text>`,
    );
  const labelled = new Set<string>();
  const boxes: Array<[number, number, number]> = [];
  for (const l of lines) {
    const pts = finite(pick(l.cell));
    if (pts.length === 1)
      out.push(`<circle cx="${f1(sx(pts[0]![0]))}" cy="${f1(sy(pts[0]![1]))}" r="3" fill="${l.colour}"/>`);
    else if (pts.length > 1)
      out.push(
        `<polyline fill="none" stroke="${l.colour}" stroke-width="1.6"${dashAttr(l)} points="${pts.map(([x, y]) => `${f1(sx(x))},${f1(sy(y))}`).join(' ')}"/>`,
      );
    if (!l.end) continue;
    // the marker sits at the step the run ended in, level with its last value (on the axis without one)
    const last = pts[pts.length - 1];
    const x = sx(Math.max(l.end.step, xAxis.log ? 1 : xAxis.lo));
    const y = last ? sy(last[1]) : plotTop + PLOT_H;
    if (last && l.end.step > last[0])
      out.push(
        `<line x1="${f1(sx(last[0]))}" y1="${f1(y)}" x2="${f1(x)}" y2="${f1(y)}" stroke="${l.colour}" stroke-width="1" stroke-dasharray="2 2"/>`,
      );
    out.push(marker(l.end.kind, x, y, l.colour));
    // one label per place: identical runs (a bisection's trials) would print it on top of itself
    const at = `${Math.round(x)},${Math.round(y)},${l.end.kind}`;
    if (!labelled.has(at)) {
      labelled.add(at);
      // a label that would cover another one moves down a line (a stop and a hang a step apart)
      const w = l.end.kind.length * 6;
      let ly = y - 6;
      for (
        let i = 0;
        i < 4 && boxes.some(([bx, by, bw]) => x + 7 < bx + bw && bx < x + 7 + w && Math.abs(by - ly) < 11);
        i++
      )
        ly += 12;
      boxes.push([x + 7, ly, w]);
      out.push(`<text x="${f1(x + 7)}" y="${f1(ly)}" font-size="10" fill="${l.colour}">${l.end.kind}</text>`);
    }
  }
  return out;
}

function legend(lines: Line[], height: number): string[] {
  const x0 = W - LEGEND_W + 14;
  const room = Math.floor((height - 40) / 16);
  const out = [`<text x="${x0}" y="${TOP - 12}" font-weight="bold">cells</text>`];
  const shown = lines.length > room ? lines.slice(0, room - 1) : lines;
  shown.forEach((l, i) => {
    const y = TOP + 4 + i * 16;
    const data = l.cell.series.loss.length + l.cell.series.toks.length > 0;
    const end = l.end ? ` · ${l.end.kind} @${l.end.step}` : data ? '' : ' · no steps';
    out.push(
      `<line x1="${x0}" y1="${y - 4}" x2="${x0 + 22}" y2="${y - 4}" stroke="${l.colour}" stroke-width="3"${dashAttr(l)}/>`,
      ...(l.end ? [marker(l.end.kind, x0 + 11, y - 4, l.colour)] : []),
      `<text x="${x0 + 30}" y="${y}" font-size="11">${esc(`${l.cell.id} ${l.cell.lane.name}`.slice(0, 26))}${esc(end)}</text>`,
    );
  });
  if (shown.length < lines.length)
    out.push(
      `<text x="${x0}" y="${TOP + 4 + shown.length * 16}" font-size="11" fill="#666">+${lines.length - shown.length} more cells</text>`,
    );
  return out;
}

export function renderSvg(cells: Cell[], title: string): string {
  const h = PANEL_H * 2 + 10;
  // colours by position among the cells shown, so no two of them share one
  const lines: Line[] = cells.map((cell, i) => ({
    cell,
    colour: SVG_COLOURS[i % SVG_COLOURS.length]!,
    dash: DASHES[Math.floor(i / SVG_COLOURS.length) % DASHES.length]!,
    end: endOf(cell),
  }));
  const xAxis = stepAxis(lines);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${h}" viewBox="0 0 ${W} ${h}" font-family="sans-serif" font-size="12">`,
    `<title>${esc(title)}</title>`,
    `<rect width="${W}" height="${h}" fill="#fff"/>`,
    ...panel('loss', 0, lines, (c) => c.series.loss, xAxis, false),
    ...panel('toks/s', PANEL_H + 10, lines, (c) => c.series.toks, xAxis, true),
    ...legend(lines, h),
    '</svg>',
    '',
  ].join('\n');
}
