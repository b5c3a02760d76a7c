/**
 * The report's details (issue 28 item 10), on the notebook of real demo runs
 * (test/fixtures/report/notebook.json, made by test/helpers/make-report-fixture.mjs): how it names
 * its notebook, which rates it ranks, how a cell made from another is described, plural agreement,
 * and a chart where a bisection's identical curves stay visible and tell their changes apart.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Cell } from '../../../src/notebook/model.js';
import { parseNotebook } from '../../../src/notebook/store.js';
import { renderMarkdown } from '../../../src/report/markdown.js';
import { buildReport } from '../../../src/report/model.js';
import { renderSvg } from '../../../src/report/svg.js';
import { notebookRef, writeReport } from '../../../src/report/write.js';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures');
const NB = join(FIX, 'report', 'notebook.json');
const notebook = () => parseNotebook(readFileSync(NB, 'utf8'), NB);
const dir = mkdtempSync(join(tmpdir(), 'nsa-report-details-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the report's Notebook line", () => {
  it('is relative only when the notebook lies beside or below the report', () => {
    expect(notebookRef('/srv/r/x.report.md', '/srv/r/nb.json', '/home/u')).toBe('nb.json');
    expect(notebookRef('/srv/r/x.report.md', '/srv/r/sub/nb.json', '/home/u')).toBe('sub/nb.json');
    // the issue's `../root/.nsa-dbg/demo-notebook.json`: as it is typed, from the home folder
    expect(notebookRef('/srv/reports/x.report.md', '/root/.nsa-dbg/demo-notebook.json', '/root')).toBe(
      '~/.nsa-dbg/demo-notebook.json',
    );
    expect(notebookRef('/srv/reports/x.report.md', '/srv/nb.json', '/home/u')).toBe('/srv/nb.json');
  });

  it('written elsewhere, the report names the notebook by a path that works from anywhere', () => {
    const out = join(dir, 'elsewhere', 'r.md');
    const text = writeReport({ notebookFile: NB, out }).text;
    const line = text.split('\n').find((l) => l.startsWith('**Notebook**'))!;
    expect(line).not.toContain('../');
    const named = /`([^`]+)`/.exec(line)![1]!;
    expect(resolve(named.replace(/^~(?=\/)/, process.env.HOME ?? '~'))).toBe(resolve(NB));
  });
});

describe('throughput of runs that did not finish', () => {
  it('is shown, never ranked against runs that finished', () => {
    const nb = notebook();
    // the issue's notebook: the hung 5-step cells ran faster than the passing one over their steps
    for (const c of nb.cells) if (c.summary?.stall) c.summary.medianToksPerS = 90;
    const m = buildReport(nb, { subject: 'x' });
    const row = (id: string) => m.performance.rows.find((r) => r.cellId === id)!;
    for (const id of ['c1', 'c3', 'c7', 'c10', 'c11'])
      expect(row(id)).toMatchObject({ slowerBy: null, unfinished: true });
    expect(row('c2')).toMatchObject({ slowerBy: 1, unfinished: false });
    const md = renderMarkdown(m, { notebook: 'n.json' });
    expect(md).not.toMatch(/× faster/);
    expect(md).toMatch(/^\| c1 baseline \| 90 \| not ranked: did not finish \|/m);
    expect(m.performance.findings.join('\n')).not.toMatch(/c1 baseline/);
  });
});

/** a cell made from c2 by the env editor (typed values and the one-key toggle are both `toggle`) */
function edited(nb: ReturnType<typeof notebook>, env: Record<string, string>, link: Cell['link'] = 'toggle') {
  const c2 = nb.cells.find((c) => c.id === 'c2')!;
  nb.cells.push({ ...c2, id: 'c13', parent: 'c2', link, env });
  return renderMarkdown(buildReport(nb, { subject: 'x' }), { notebook: 'n.json' });
}

describe('a cell made from another', () => {
  it('says what was set or unset on which cell, not "toggle of c2"', () => {
    let nb = notebook();
    const c2env = nb.cells.find((c) => c.id === 'c2')!.env;
    let md = edited(nb, { ...c2env, NSA_FOO: 'bar baz' });
    expect(md).toContain('- **From**: NSA_FOO=bar baz set on c2');
    expect(md).not.toMatch(/toggle of/);
    nb = notebook();
    const { NSA_PREFILL_BATCHED: _, ...rest } = c2env;
    md = edited(nb, { ...rest, NSA_USE_FA2: '0' });
    expect(md).toContain('- **From**: NSA_USE_FA2=0 set and NSA_PREFILL_BATCHED unset on c2');
    nb = notebook();
    expect(edited(nb, c2env, 'rerun')).toContain('- **From**: re-run of c2');
  });
});

describe('plural agreement', () => {
  it('a bisection over one change says so, not "of the 1 changes"', () => {
    const nb = notebook();
    const b = nb.bisections![0]!;
    const found = b.result!.minimal[0]!;
    b.changes = [b.changes[found]!];
    b.result = { ...b.result!, minimal: [0] };
    const items = buildReport(nb, { subject: 'x' }).recommendations.flatMap((g) => g.items);
    const keep = items.find((i) => i.startsWith('Keep '))!;
    expect(keep).not.toMatch(/of the 1 changes/);
    expect(keep).toContain(
      'NSA_PREFILL_BATCHED unset, the one change between `batched-prefill` (GO) and `demo-many-flags`, alone is enough',
    );
  });
});

describe("a bisection's chart", () => {
  const m = buildReport(notebook(), { subject: 'x' });
  const svg = renderSvg(
    m.rows.map((r) => r.cell),
    't',
    m.rows.map((r) => r.configuration),
  );
  const legend = [...svg.matchAll(/<text x="\d+" y="\d+" font-size="11">(c\d+ [^<]*)<\/text>/g)].map(
    (x) => x[1]!,
  );

  it("names each cell's change in the legend: no two trials read alike", () => {
    const trials = legend.filter((l) => /^c(7|8|9|10|11) /.test(l));
    expect(trials).toHaveLength(5);
    expect(new Set(trials.map((l) => l.replace(/ · .*/, ''))).size).toBe(5);
    expect(trials.find((l) => l.startsWith('c11 '))).toMatch(
      /^c11 batched-prefill \+ NSA_PREFILL_BATCHED unset · hang @6/,
    );
    expect(trials.find((l) => l.startsWith('c10 '))).toContain('NSA_SEL_RANGES_V2=0');
  });

  it('draws identical curves apart (own dash, a little higher) and says whose curve they repeat', () => {
    // c1, c7, c10 and c11 hung alike: four identical loss curves, found by their legend swatches
    const swatch = new Map(
      [
        ...svg.matchAll(
          /stroke="(#[0-9A-F]{6})" stroke-width="3"( stroke-dasharray="[^"]+")?\/>\n(?:<[^\n]*\n)?<text [^>]*>(c\d+) /g,
        ),
      ].map((x) => [x[3]!, `stroke="${x[1]}" stroke-width="1.6"${x[2] ?? ''} points="`]),
    );
    const lossCurve = (id: string) => {
      const head = swatch.get(id)!;
      const at = svg.indexOf(head);
      expect(at).toBeGreaterThan(0);
      return svg.slice(at + head.length, svg.indexOf('"', at + head.length));
    };
    const hung = ['c1', 'c7', 'c10', 'c11'];
    expect(new Set(hung.map((id) => swatch.get(id))).size).toBe(4);
    expect(new Set(hung.map(lossCurve)).size).toBe(4);
    for (const id of ['c7', 'c10', 'c11'])
      expect(legend.find((l) => l.startsWith(`${id} `))).toMatch(/ · same curve as c1$/);
    expect(legend.find((l) => l.startsWith('c8 '))).toMatch(/ · same curve as c2$/);
    expect(legend.find((l) => l.startsWith('c1 '))).not.toContain('same curve');
  });
});

describe("a cell's slow steps and dumps, summarised like analyze does", () => {
  it('the long step first, the evaluations as one group (the real nanoGPT run as a cell)', async () => {
    const r = await analyzeDir(join(FIX, 'nanogpt-evals'));
    const nb = notebook();
    const c2 = nb.cells.find((c) => c.id === 'c2')!;
    c2.analysis = { ...c2.analysis, slowSteps: r.slowSteps };
    c2.excerpts = { ...c2.excerpts!, causes: r.digest!.excerpts.causes! };
    const md = renderMarkdown(buildReport(nb, { subject: 'x', cells: ['c2'] }), { notebook: 'n.json' });
    const line = md.split('\n').find((l) => l.startsWith('- **Slow steps**: '))!;
    expect(line).toMatch(/^- \*\*Slow steps\*\*: rank 0, step 572: 17\.7 s \(median 0\.1 s\); /);
    expect(line).toMatch(/; \d+ evaluations, 0\.\d–0\.\d s, every 50 steps \(steps 0–600, rank 0\)$/);
    expect(line).not.toMatch(/step 50:/);
  });

  it("a hang's stack dump says it is the same place as the run's other dumps", () => {
    const md = renderMarkdown(buildReport(notebook(), { subject: 'x', cells: ['c1'] }), {
      notebook: 'n.json',
    });
    expect(md).toContain(
      '**Stack dump** `stackdump_1795464206.txt`, main thread, innermost first (the same place in all 9 dumps of the run):',
    );
  });
});
