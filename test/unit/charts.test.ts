import { describe, expect, it } from 'vitest';
import { BrailleCanvas, formatAxisValue, plotSeriesSegments } from '../../panels/charts/braille.js';
import { ema, lastFinite } from '../../panels/charts/ema.js';
import { gauge, gaugeBar, percent } from '../../panels/charts/gauge.js';
import { sparkline } from '../../panels/charts/sparkline.js';

/** the plotted rows as plain strings (the segments' texts joined) */
const plotSeries = (series: { points: { step: number; value: number }[] }[], width: number, height: number) =>
  plotSeriesSegments(series, width, height).map((row) => row.map((s) => s.text).join(''));

const pts = (values: number[]) => values.map((value, i) => ({ step: i + 1, value }));

describe('BrailleCanvas', () => {
  it('maps each of the 8 dots of a cell to its braille bit', () => {
    const c = new BrailleCanvas(1, 1);
    c.set(0, 0);
    expect(c.rows()).toEqual(['⠁']);
    c.set(1, 3);
    expect(c.rows()).toEqual(['⢁']);
  });

  it('draws a full cell when every dot is set, and ignores dots outside', () => {
    const c = new BrailleCanvas(1, 1);
    for (let x = 0; x < 2; x++) for (let y = 0; y < 4; y++) c.set(x, y);
    c.set(5, 5);
    c.set(-1, 0);
    expect(c.rows()).toEqual(['⣿']);
  });

  it('draws a Bresenham diagonal across cells', () => {
    const c = new BrailleCanvas(2, 1);
    c.line(0, 0, 3, 3);
    // dots (0,0) (1,1) in cell 0, (2,2) (3,3) in cell 1
    expect(c.rows()).toEqual(['⠑⢄']);
  });

  it('draws horizontal and vertical lines inclusive of both ends', () => {
    const h = new BrailleCanvas(2, 1);
    h.line(0, 3, 3, 3);
    expect(h.rows()).toEqual(['⣀⣀']);
    const v = new BrailleCanvas(1, 2);
    v.line(0, 0, 0, 7);
    expect(v.rows()).toEqual(['⡇', '⡇']);
  });
});

describe('plotSeries', () => {
  it('returns exactly height rows of exactly width characters', () => {
    const rows = plotSeries([{ points: pts([5.7, 5.72, 5.69, 5.71]) }], 30, 4);
    expect(rows).toHaveLength(4);
    for (const r of rows) expect([...r]).toHaveLength(30);
  });

  it('labels max on the top row and min on the bottom row of the left axis', () => {
    const rows = plotSeries([{ points: pts([19, 85, 70]) }], 20, 3);
    expect(rows[0]).toMatch(/^85\.0┤/);
    expect(rows[2]).toMatch(/^19\.0┤/);
    expect(rows[1]).toMatch(/^ {4}│/);
  });

  it('puts the first step at the left edge and the last at the right (x = step)', () => {
    const rows = plotSeries(
      [
        {
          points: [
            { step: 10, value: 1 },
            { step: 20, value: 0 },
          ],
        },
      ],
      12,
      2,
    );
    const plot = rows.map((r) => r.slice(r.indexOf('┤') + 1));
    // value 1 (max) at step 10: top-left dot; value 0 (min) at step 20: bottom-right dot.
    expect(plot[0]!.codePointAt(0)! & 0x01).toBe(0x01);
    expect(plot[1]!.codePointAt(plot[1]!.length - 1)! & 0x80).toBe(0x80);
  });

  it('plots an all-equal series as a flat line in the middle', () => {
    const rows = plotSeries([{ points: pts([3, 3, 3, 3]) }], 10, 3);
    const plot = rows.map((r) => r.slice(r.search(/[┤│]/) + 1));
    expect(plot[0]).toBe('⠀'.repeat(plot[0]!.length));
    expect(plot[1]).not.toBe('⠀'.repeat(plot[1]!.length));
    expect(plot[2]).toBe('⠀'.repeat(plot[2]!.length));
  });

  it('breaks the line at NaN and does not let it stretch the range', () => {
    const rows = plotSeries([{ points: pts([5.7, Number.NaN, 5.6]) }], 16, 2);
    expect(rows[0]).toContain('5.70');
    expect(rows[1]).toContain('5.60');
  });

  it('keeps an empty plot of the right size when there is no data', () => {
    const rows = plotSeries([{ points: [] }], 10, 3);
    expect(rows).toHaveLength(3);
    for (const r of rows) expect([...r]).toHaveLength(10);
    expect(plotSeries([{ points: [] }], 0, 3)).toEqual([]);
  });

  it('tells which series drew each cell, the later series on top', () => {
    const raw = pts([1, 3, 1, 3]);
    const smooth = pts([2, 2, 2, 2]);
    const rows = plotSeriesSegments([{ points: raw }, { points: smooth }], 20, 4);
    const owners = new Set(rows.flat().map((s) => s.series));
    expect(owners).toEqual(new Set([-1, 0, 1]));
    expect(rows.every((r) => r[0]!.series === -1)).toBe(true);
  });

  it('formats axis values compactly', () => {
    expect(formatAxisValue(5.7391)).toBe('5.74');
    expect(formatAxisValue(143771)).toBe('144k');
    expect(formatAxisValue(2123)).toBe('2.1k');
    expect(formatAxisValue(0.0012)).toBe('0.0012');
    expect(formatAxisValue(0)).toBe('0.00');
  });
});

describe('ema', () => {
  it('seeds with the first value and moves alpha of the way to each new one', () => {
    expect(ema(pts([10, 20, 20]), 0.5).map((p) => p.value)).toEqual([10, 15, 17.5]);
  });

  it('keeps steps and passes NaN through without poisoning the average', () => {
    const out = ema(pts([1, Number.NaN, 3]), 0.5);
    expect(out.map((p) => p.step)).toEqual([1, 2, 3]);
    expect(out[1]!.value).toBeNaN();
    expect(out[2]!.value).toBe(2);
  });

  it('finds the newest finite value', () => {
    expect(lastFinite(pts([1, 2, Number.NaN]))).toEqual({ step: 2, value: 2 });
    expect(lastFinite([])).toBeNull();
  });
});

describe('sparkline', () => {
  it('scales min..max onto the eight bars', () => {
    expect(sparkline([0, 1, 2, 3, 4, 5, 6, 7])).toBe('▁▂▃▄▅▆▇█');
  });

  it('does not flatten floats in a range below 1', () => {
    expect(sparkline([0.1, 0.5, 0.9, 0.3])).toBe('▁▅█▃');
  });

  it('draws all-equal values as a steady line and NaN as a space', () => {
    expect(sparkline([2, 2, 2])).toBe('▄▄▄');
    expect(sparkline([1, Number.NaN, 2])).toBe('▁ █');
    expect(sparkline([Number.NaN, Number.NaN])).toBe('  ');
    expect(sparkline([])).toBe('');
  });

  it('keeps only the newest values when given a width, and honours a fixed min', () => {
    expect(sparkline([9, 9, 0, 4, 8], { width: 3 })).toBe('▁▅█');
    expect(sparkline([4, 4], { min: 0 })).toBe('██');
  });
});

describe('gauge', () => {
  it('fills the bar in proportion and appends the percentage', () => {
    expect(gauge(50, 100, 10)).toBe('█████░░░░░  50%');
    expect(gauge(2123, 143771, 10)).toBe('░░░░░░░░░░   1%');
  });

  it('clamps the bar but reports more than 100 %, and survives a zero total', () => {
    expect(gaugeBar(1.5, 4)).toBe('████');
    expect(percent(1.5)).toBe('150%');
    expect(gauge(5, 0, 4)).toBe('░░░░   0%');
  });

  it('marks a limit inside the bar', () => {
    expect(gaugeBar(0.25, 8, { markAt: 0.5 })).toBe('██░░┃░░░');
    expect(gaugeBar(0.25, 8, { markAt: 2 })).toBe('██░░░░░░');
  });
});
