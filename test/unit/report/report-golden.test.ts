import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseNotebook } from '../../../src/notebook/store.js';
import { renderMarkdown } from '../../../src/report/markdown.js';
import { buildReport } from '../../../src/report/model.js';
import { renderSvg } from '../../../src/report/svg.js';
import { writeReport } from '../../../src/report/write.js';

// The notebook was made by real demo runs (test/helpers/make-report-fixture.mjs): baseline hangs at
// step 5, batched-prefill passes, fp16 goes NaN, fa2 crashes.
const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'report');
const NB = join(FIX, 'notebook.json');
const dir = mkdtempSync(join(tmpdir(), 'nsa-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function golden(name: string, actual: string) {
  const file = join(FIX, name);
  if (process.env.UPDATE_GOLDEN) writeFileSync(file, actual);
  expect(actual).toBe(readFileSync(file, 'utf8'));
}

const notebook = () => parseNotebook(readFileSync(NB, 'utf8'), NB);

describe('report from a notebook of real demo runs', () => {
  it('matches the golden Markdown and SVG', () => {
    const m = buildReport(notebook(), { subject: 'notebook' });
    golden('step5.report.md', renderMarkdown(m, { notebook: 'step5.json', chart: 'step5.report.svg' }));
    golden(
      'step5.report.svg',
      renderSvg(
        m.rows.map((r) => r.cell),
        m.title.slice(2),
      ),
    );
  });

  it('has the seed reports’ shape: title, metadata, table, decision', () => {
    const md = renderMarkdown(buildReport(notebook(), { subject: 'x' }), { notebook: 'n.json' });
    expect(md.split('\n')[0]).toMatch(/^# [0-9]{4}-[0-9]{2}-[0-9]{2} Test Engineer Report - .+ v[0-9]+$/);
    expect(md).toMatch(/^\*\*Decision\*\*: \*\*CONDITIONAL GO\*\* ⚠️$/m);
    expect(md).toMatch(/^## GO\/NO-GO Decision: CONDITIONAL GO ⚠️$/m);
    expect(md).toContain('| Configuration | Steps Reached | Hang Point | Key Finding |');
    expect(md).toMatch(
      /^\| c1 baseline \| 5 \/ 8 \| step 6 \(in-step\), rank 0 \| hang; main thread in _forward_prefill_sequential/m,
    );
    expect(md).toMatch(/^\| c2 batched-prefill \| 8 \/ 8 \| none \| passed 8 steps/m);
    expect(md).toMatch(/^\| c3 fp16 \| 1 \/ 8 \| NaN at step 2 \|/m);
    expect(md).toMatch(/^\| c4 fa2 \| 0 \/ 8 \| crash at step 1 \| RuntimeError: CUDA error/m);
    expect(md).toContain('Try `NSA_PREFILL_BATCHED=1`: the env of c2 batched-prefill, which passed.');
  });

  it('writes the same bytes twice, the chart beside the report and linked from it', () => {
    const a = writeReport({ notebookFile: NB, out: join(dir, 'a', 'r.md') });
    const first = readFileSync(join(dir, 'a', 'r.md'));
    const svg = readFileSync(join(dir, 'a', 'r.svg'));
    writeReport({ notebookFile: NB, out: join(dir, 'a', 'r.md') });
    expect(readFileSync(join(dir, 'a', 'r.md')).equals(first)).toBe(true);
    expect(readFileSync(join(dir, 'a', 'r.svg')).equals(svg)).toBe(true);
    expect(a.files).toEqual([join(dir, 'a', 'r.md'), join(dir, 'a', 'r.svg')]);
    expect(a.text).toContain('![loss and toks/s by cell](r.svg)');
  });

  it('JSON carries the same decision and rows', () => {
    const r = writeReport({ notebookFile: NB, out: '-', format: 'json' });
    const j = JSON.parse(r.text);
    expect(j.decision).toBe('CONDITIONAL GO');
    expect(j.rows.map((x: { cellId: string; go: boolean }) => [x.cellId, x.go])).toEqual([
      ['c1', false],
      ['c2', true],
      ['c3', false],
      ['c4', false],
    ]);
  });

  it('never prints a secret, even from a notebook written before masking', () => {
    const nb = notebook();
    nb.cells[1]!.env = { ...nb.cells[1]!.env, HF_TOKEN: 'hf_leakme123' };
    nb.cells[1]!.command = [...nb.cells[1]!.command, '--wandb-api-key', 'leak456'];
    const md = renderMarkdown(buildReport(nb, { subject: 's' }), { notebook: 'n' });
    expect(md).not.toContain('hf_leakme123');
    expect(md).not.toContain('leak456');
    expect(md).toContain("HF_TOKEN='***'");
  });

  it('decides GO only when every cell passed, NO-GO when none did', () => {
    const nb = notebook();
    const only = (ids: string[]) => buildReport(nb, { subject: 's', cells: ids }).decision;
    expect(only(['c2'])).toBe('GO');
    expect(only(['c1', 'fp16'])).toBe('NO-GO');
    expect(only(['batched-prefill', 'c4'])).toBe('CONDITIONAL GO');
  });
});
