/**
 * The report's chart: loss and toks/s per step, one line per cell on shared axes (colour fixed by
 * cell id), labelled by cell and lane. Plain SVG text with fixed number formatting, so the same
 * notebook gives the same bytes.
 */
import { type Cell, colourSlot, type Series } from '../notebook/model.js';

/** Okabe-Ito colours (distinguishable with colour-blindness), yellow left out (unreadable on white) */
export const SVG_COLOURS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'];

const W = 760;
const PANEL_H = 220;
const LEFT = 60;
const RIGHT = 180;
const TOP = 30;
const BOTTOM = 30;

const f1 = (v: number) => (Math.round(v * 10) / 10).toFixed(1);
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function tickLabel(v: number, span: number): string {
  if (span >= 100) return String(Math.round(v));
  if (span >= 1) return v.toFixed(1);
  return v.toFixed(3);
}

function panel(title: string, y0: number, cells: Cell[], pick: (c: Cell) => Series): string[] {
  const all = cells.flatMap((c) => pick(c).filter((p) => Number.isFinite(p[1])));
  const out = [`<text x="${LEFT}" y="${y0 + 18}" font-weight="bold">${esc(title)}</text>`];
  const plotTop = y0 + TOP;
  const plotH = PANEL_H - TOP - BOTTOM;
  const plotW = W - LEFT - RIGHT;
  out.push(`<rect x="${LEFT}" y="${plotTop}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`);
  if (all.length === 0) {
    out.push(`<text x="${LEFT + 10}" y="${plotTop + 20}" fill="#666">no data</text>`);
    return out;
  }
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  let [ylo, yhi] = [Math.min(...ys), Math.max(...ys)];
  if (yhi === ylo) [ylo, yhi] = [ylo - 1, yhi + 1];
  const pad = (yhi - ylo) * 0.05;
  ylo -= pad;
  yhi += pad;
  const sx = (x: number) => LEFT + (x1 === x0 ? plotW / 2 : ((x - x0) / (x1 - x0)) * plotW);
  const sy = (y: number) => plotTop + plotH - ((y - ylo) / (yhi - ylo)) * plotH;
  for (let i = 0; i <= 4; i++) {
    const v = ylo + ((yhi - ylo) * i) / 4;
    out.push(
      `<line x1="${LEFT}" y1="${f1(sy(v))}" x2="${LEFT + plotW}" y2="${f1(sy(v))}" stroke="#eee"/>`,
      `<text x="${LEFT - 6}" y="${f1(sy(v) + 4)}" text-anchor="end" font-size="11">${tickLabel(v, yhi - ylo)}</text>`,
    );
  }
  out.push(
    `<text x="${LEFT}" y="${plotTop + plotH + 16}" font-size="11">step ${x0}</text>`,
    `<text x="${LEFT + plotW}" y="${plotTop + plotH + 16}" font-size="11" text-anchor="end">step ${x1}</text>`,
  );
  cells.forEach((c, i) => {
    const colour = SVG_COLOURS[colourSlot(c.id, SVG_COLOURS.length)]!;
    const pts = pick(c).filter((p) => Number.isFinite(p[1]));
    if (pts.length === 1) {
      const [x, y] = pts[0]!;
      out.push(`<circle cx="${f1(sx(x))}" cy="${f1(sy(y))}" r="3" fill="${colour}"/>`);
    } else if (pts.length > 1) {
      const d = pts.map(([x, y]) => `${f1(sx(x))},${f1(sy(y))}`).join(' ');
      out.push(`<polyline fill="none" stroke="${colour}" stroke-width="1.5" points="${d}"/>`);
    }
    const ly = plotTop + 12 + i * 16;
    out.push(
      `<line x1="${W - RIGHT + 10}" y1="${ly - 4}" x2="${W - RIGHT + 30}" y2="${ly - 4}" stroke="${colour}" stroke-width="3"/>`,
      `<text x="${W - RIGHT + 36}" y="${ly}" font-size="11">${esc(`${c.id} ${c.lane.name}`)}${pts.length ? '' : ' (no data)'}</text>`,
    );
  });
  return out;
}

export function renderSvg(cells: Cell[], title: string): string {
  const h = PANEL_H * 2 + 10;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${h}" viewBox="0 0 ${W} ${h}" font-family="sans-serif" font-size="12">`,
    `<title>${esc(title)}</title>`,
    `<rect width="${W}" height="${h}" fill="#fff"/>`,
    ...panel('loss', 0, cells, (c) => c.series.loss),
    ...panel('toks/s', PANEL_H + 10, cells, (c) => c.series.toks),
    '</svg>',
    '',
  ].join('\n');
}
