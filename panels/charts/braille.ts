/**
 * A small braille canvas (2×4 dots per terminal cell) and a line plot on top of it. Everything is a
 * pure string renderer so it can be unit-tested and dropped into an Ink `<Text>`; blessed-contrib
 * cannot be used because its widgets need a blessed Screen, which cannot live inside Ink.
 */
import type { SeriesPoint } from '../../src/session/state.js';

const BRAILLE_BASE = 0x2800;
/** Dot bit for (column 0..1, row 0..3) inside one cell, per the Unicode braille layout. */
const DOT_BITS: readonly (readonly [number, number])[] = [
  [0x01, 0x08],
  [0x02, 0x10],
  [0x04, 0x20],
  [0x40, 0x80],
];

/** A monochrome dot grid; `owner` remembers which series drew last into each cell (for styling). */
export class BrailleCanvas {
  readonly dotWidth: number;
  readonly dotHeight: number;
  private readonly bits: Uint8Array;
  private readonly owners: Int16Array;

  constructor(
    readonly cellWidth: number,
    readonly cellHeight: number,
  ) {
    this.dotWidth = cellWidth * 2;
    this.dotHeight = cellHeight * 4;
    this.bits = new Uint8Array(cellWidth * cellHeight);
    this.owners = new Int16Array(cellWidth * cellHeight).fill(-1);
  }

  set(x: number, y: number, owner = 0): void {
    if (x < 0 || y < 0 || x >= this.dotWidth || y >= this.dotHeight) return;
    const cell = Math.floor(y / 4) * this.cellWidth + Math.floor(x / 2);
    this.bits[cell] = (this.bits[cell] ?? 0) | (DOT_BITS[y % 4]?.[x % 2] ?? 0);
    this.owners[cell] = owner;
  }

  /** Bresenham line between two dot coordinates, endpoints included. */
  line(x0: number, y0: number, x1: number, y1: number, owner = 0): void {
    const dx = Math.abs(x1 - x0);
    const dy = -Math.abs(y1 - y0);
    const sx = x0 < x1 ? 1 : -1;
    const sy = y0 < y1 ? 1 : -1;
    let err = dx + dy;
    let x = x0;
    let y = y0;
    for (;;) {
      this.set(x, y, owner);
      if (x === x1 && y === y1) return;
      const e2 = 2 * err;
      if (e2 >= dy) {
        err += dy;
        x += sx;
      }
      if (e2 <= dx) {
        err += dx;
        y += sy;
      }
    }
  }

  /** One cell as a braille character (U+2800 is the blank pattern, which has width 1). */
  char(cx: number, cy: number): string {
    return String.fromCharCode(BRAILLE_BASE + (this.bits[cy * this.cellWidth + cx] ?? 0));
  }

  owner(cx: number, cy: number): number {
    return this.owners[cy * this.cellWidth + cx] ?? -1;
  }

  rows(): string[] {
    const out: string[] = [];
    for (let cy = 0; cy < this.cellHeight; cy++) {
      let row = '';
      for (let cx = 0; cx < this.cellWidth; cx++) row += this.char(cx, cy);
      out.push(row);
    }
    return out;
  }
}

export interface PlotOptions {
  /** fixed y-range; by default the range of all finite values */
  yMin?: number;
  yMax?: number;
  /** axis label formatter */
  format?: (v: number) => string;
}

/** A run of characters drawn by one series (-1: the axis or empty plot area). */
export interface PlotSegment {
  text: string;
  series: number;
}

/** Compact axis numbers: 5.74, 0.0012, 81.3, 143k. */
export function formatAxisValue(v: number): string {
  const a = Math.abs(v);
  if (a >= 10_000) return `${(v / 1000).toFixed(0)}k`;
  if (a >= 1000) return `${(v / 1000).toFixed(1)}k`;
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 0.01 || a === 0) return v.toFixed(2);
  return v.toPrecision(2);
}

function valueRange(series: { points: SeriesPoint[] }[], opts: PlotOptions) {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  let xLo = Number.POSITIVE_INFINITY;
  let xHi = Number.NEGATIVE_INFINITY;
  for (const s of series) {
    for (const p of s.points) {
      if (!Number.isFinite(p.value) || !Number.isFinite(p.step)) continue;
      lo = Math.min(lo, p.value);
      hi = Math.max(hi, p.value);
      xLo = Math.min(xLo, p.step);
      xHi = Math.max(xHi, p.step);
    }
  }
  if (opts.yMin !== undefined) lo = opts.yMin;
  if (opts.yMax !== undefined) hi = opts.yMax;
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return null;
  if (hi === lo) {
    // A flat series still needs a non-empty range; centre it.
    const pad = Math.abs(lo) * 0.05 || 1;
    lo -= pad;
    hi += pad;
  }
  return { lo, hi, xLo, xHi };
}

/**
 * Plot series as braille lines into `height` rows of `width` columns, including a left axis that
 * carries the max (top row) and min (bottom row) labels. x is the step; later series are drawn on
 * top of earlier ones. Non-finite values break the line instead of being drawn.
 */
export function plotSeriesSegments(
  series: { points: SeriesPoint[] }[],
  width: number,
  height: number,
  opts: PlotOptions = {},
): PlotSegment[][] {
  if (width < 1 || height < 1) return [];
  const range = valueRange(series, opts);
  const fmt = opts.format ?? formatAxisValue;
  const top = range ? fmt(range.hi) : '';
  const bottom = range ? fmt(range.lo) : '';
  const labelWidth = Math.max(top.length, bottom.length);
  const plotWidth = Math.max(0, width - labelWidth - 1);
  const canvas = new BrailleCanvas(plotWidth, height);

  if (range && plotWidth > 0) {
    const xSpan = range.xHi - range.xLo;
    const toX = (step: number) =>
      xSpan === 0 ? 0 : Math.round(((step - range.xLo) / xSpan) * (canvas.dotWidth - 1));
    const toY = (v: number) => {
      const clamped = Math.min(range.hi, Math.max(range.lo, v));
      return Math.round(((range.hi - clamped) / (range.hi - range.lo)) * (canvas.dotHeight - 1));
    };
    series.forEach((s, owner) => {
      let prev: { x: number; y: number } | null = null;
      for (const p of s.points) {
        if (!Number.isFinite(p.value) || !Number.isFinite(p.step)) {
          prev = null;
          continue;
        }
        const cur = { x: toX(p.step), y: toY(p.value) };
        if (prev) canvas.line(prev.x, prev.y, cur.x, cur.y, owner);
        else canvas.set(cur.x, cur.y, owner);
        prev = cur;
      }
    });
  }

  const rows: PlotSegment[][] = [];
  for (let cy = 0; cy < height; cy++) {
    const label = cy === 0 ? top : cy === height - 1 ? bottom : '';
    const axis = label ? '┤' : '│';
    const segments: PlotSegment[] = [{ text: label.padStart(labelWidth) + axis, series: -1 }];
    for (let cx = 0; cx < plotWidth; cx++) {
      const owner = canvas.owner(cx, cy);
      const last = segments[segments.length - 1]!;
      const ch = canvas.char(cx, cy);
      if (last.series === owner) last.text += ch;
      else segments.push({ text: ch, series: owner });
    }
    rows.push(segments);
  }
  return rows;
}
