/**
 * The report's performance table makes no claim its steps cannot carry: a cell 8 % slower by its
 * median, over few noisy steps, is "same (±X %)"; the same 8 % over many steady steps is "1.1×
 * slower". On the notebook of real demo runs (test/fixtures/report/notebook.json), with two cells
 * added whose per-step toks/s are drawn around a known mean.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Cell } from '../../../src/notebook/model.js';
import { parseNotebook } from '../../../src/notebook/store.js';
import { renderMarkdown } from '../../../src/report/markdown.js';
import { buildReport } from '../../../src/report/model.js';

const NB = join(import.meta.dirname, '..', '..', 'fixtures', 'report', 'notebook.json');

/** per-step toks/s around `mean`, ±`spread` (relative), from a fixed pattern */
function toks(n: number, mean: number, spread: number): Array<[number, number]> {
  return Array.from({ length: n }, (_, i) => [i + 1, mean * (1 + spread * Math.sin(i * 2.399963))]);
}

describe('performance against the fastest, with its interval', () => {
  it('few noisy steps: same (±X %); many steady steps: the factor', () => {
    const nb = parseNotebook(readFileSync(NB, 'utf8'), NB);
    const fastest = nb.cells.find((c) => c.id === 'c2')!;
    const top = fastest.summary!.medianToksPerS!;
    fastest.series.toks = toks(300, top, 0.02);
    const clone = (id: string, series: Array<[number, number]>): Cell => {
      const c = structuredClone(fastest);
      c.id = id;
      c.parent = undefined;
      c.link = undefined;
      c.series = { ...c.series, toks: series };
      c.summary = { ...c.summary!, medianToksPerS: Math.round(top * 0.92 * 10) / 10 };
      return c;
    };
    nb.cells.push(clone('c90', toks(12, top * 0.92, 0.4)), clone('c91', toks(300, top * 0.92, 0.02)));
    const m = buildReport(nb, { subject: 'x' });
    const row = (id: string) => m.performance.rows.find((r) => r.cellId === id)!;
    expect(row('c90').vsFastest).toMatchObject({ metric: 'toks/s', resolved: false });
    expect(row('c91').vsFastest).toMatchObject({ metric: 'toks/s', resolved: true });
    expect(row('c91').vsFastest!.hi).toBeLessThan(0);
    const md = renderMarkdown(m, { notebook: 'n.json' });
    const line = (id: string) =>
      md.split('\n').find((l) => l.startsWith(`| ${id} `) && /slower|faster|same|not ranked/.test(l))!;
    expect(line('c90')).toMatch(/\| same \(±\d+(\.\d)? %\) \|/);
    expect(line('c91')).toMatch(/\| 1\.1× slower \|/);
  });
});
