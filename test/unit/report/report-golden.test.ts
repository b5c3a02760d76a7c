import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { markdownSection } from '../../../src/bisect/table.js';
import { parseNotebook } from '../../../src/notebook/store.js';
import { renderMarkdown } from '../../../src/report/markdown.js';
import { buildReport } from '../../../src/report/model.js';
import { renderSvg } from '../../../src/report/svg.js';
import { writeReport } from '../../../src/report/write.js';

// The notebook was made by real demo runs (test/helpers/make-report-fixture.mjs): c1 baseline
// hangs at step 6, c2 batched-prefill passes, c3 fp16 goes NaN, c4 fa2 crashes, c5
// demo-slow-prefill is slow (GO) and below its lane's target, c6 batched-prefill runs 100 steps,
// c7-c11 are the trials of bisection b1 (batched-prefill vs demo-many-flags), c12 was stopped.
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
const sections = (nb = notebook()) => (nb.bisections ?? []).flatMap((b) => markdownSection(nb, b));
const report = (nb = notebook(), cells?: string[]) =>
  renderMarkdown(buildReport(nb, { subject: 'x', cells }), { notebook: 'n.json', bisections: sections(nb) });
/** the lines of one `## ` section */
const section = (md: string, title: string) => {
  const from = md.indexOf(`\n## ${title}`);
  const to = md.indexOf('\n## ', from + 4);
  return md.slice(from, to < 0 ? undefined : to);
};

describe('report from a notebook of real demo runs', () => {
  it('matches the golden Markdown and SVG', () => {
    const nb = notebook();
    const m = buildReport(nb, { subject: 'notebook' });
    golden(
      'step5.report.md',
      renderMarkdown(m, { notebook: 'step5.json', chart: 'step5.report.svg', bisections: sections(nb) }),
    );
    golden(
      'step5.report.svg',
      renderSvg(
        m.rows.map((r) => r.cell),
        m.title.slice(2),
        m.rows.map((r) => r.configuration),
      ),
    );
  });

  it('has the seed reports’ shape: title, metadata, table, decision', () => {
    const md = report();
    expect(md.split('\n')[0]).toMatch(/^# [0-9]{4}-[0-9]{2}-[0-9]{2} Test Engineer Report - .+ v[0-9]+$/);
    expect(md).toMatch(/^## GO\/NO-GO Decision: CONDITIONAL GO ⚠️$/m);
    expect(md).toContain('| Configuration | Steps Reached | Hang Point | Key Finding |');
    expect(md).toMatch(
      /^\| c1 baseline \| 5 \/ 8 \| step 6 \(in-step\), rank 0 \| hang; main thread in _forward_prefill_sequential/m,
    );
    expect(md).toMatch(/^\| c2 batched-prefill \| 8 \/ 8 \| none \| passed 8 steps/m);
    expect(md).toMatch(/^\| c3 fp16 \| 1 \/ 8 \| NaN at step 2 \|/m);
    expect(md).toMatch(/^\| c4 fa2 \| 0 \/ 8 \| crash at step 1 \| RuntimeError: CUDA error/m);
  });

  it("names a bisection's cells by what they ran: the lane plus the changes, not the lane's description", () => {
    const md = report();
    expect(md).toMatch(/^\| c11 batched-prefill \+ NSA_PREFILL_BATCHED unset \| 5 \/ 8 \| step 6/m);
    expect(md).toMatch(/^\| c10 batched-prefill \+ NSA_PREFILL_BATCHED unset, NSA_SEL_RANGES_V2=0 \|/m);
    expect(md).toMatch(/^\| c8 batched-prefill \(b1 good side\) \| 8 \/ 8 \| none \|/m);
    expect(md).toMatch(/^\| c7 batched-prefill \+ all 4 changes of demo-many-flags \|/m);
    const c11 = md.slice(md.indexOf('### c11 '), md.indexOf('### c12 '));
    expect(c11).toMatch(/^### c11 batched-prefill \+ NSA_PREFILL_BATCHED unset ❌ NO-GO$/m);
    expect(c11).toContain(
      '- **Lane**: `batched-prefill` with NSA_PREFILL_BATCHED unset — trial 4 of bisection b1 (good `batched-prefill`, bad `demo-many-flags`)',
    );
    expect(c11).not.toContain('the fix for the step-5 hang');
  });

  it('recommends from the bisection first, then from cells one change apart; never a flag shown irrelevant', () => {
    const m = buildReport(notebook(), { subject: 'x' });
    expect(m.recommendations.map((g) => g.title)).toEqual([
      'From the flag bisection',
      'From cells that differ in one change',
      'Still open',
      'Performance',
    ]);
    const [bisect, siblings, open] = m.recommendations;
    expect(bisect!.items[0]).toMatch(/^Keep `NSA_PREFILL_BATCHED=1` \(bisection b1, 5 runs\)/);
    expect(bisect!.items[0]).toContain(
      '`NSA_LOG_GRAD_NORM`, `NSA_NVTX`, `NSA_SEL_RANGES_V2` made no difference',
    );
    expect(siblings!.items).toEqual([
      expect.stringMatching(
        /^`NSA_PREFILL_BATCHED=1`: c1 baseline fails \(hang at step 6.*agrees with the bisection\.$/,
      ),
      expect.stringMatching(/^`NSA_USE_FA2` unset: c4 fa2 fails \(crash at step 1: RuntimeError/),
    ]);
    // fp16 differs from every passing cell in two changes: no arbitrary diff is offered as its fix
    expect(open!.items[0]).toMatch(
      /^c3 fp16: non-finite loss at step 2\. .*closest: c2 batched-prefill, 2 changes/,
    );
    const all = m.recommendations.flatMap((g) => g.items).join('\n');
    expect(all).not.toMatch(/Keep `NSA_(NVTX|SEL_RANGES_V2|LOG_GRAD_NORM)|Try unsetting/);
  });

  it('a hang nsa-dbg stopped is no Crash; a stopped cell says so and is not judged', () => {
    const md = report();
    const c1 = md.slice(md.indexOf('### c1 baseline'), md.indexOf('### c2 '));
    expect(c1).not.toContain('**Crash**');
    expect(c1).not.toContain('KeyboardInterrupt: ');
    expect(c1).toContain('- **Stopped**: by nsa-dbg once the hang was confirmed');
    const c4 = md.slice(md.indexOf('### c4 fa2'), md.indexOf('### c5 '));
    expect(c4).toContain('**Crash**');
    expect(md).toMatch(/^### c12 batched-prefill ⏹️ STOPPED$/m);
    expect(md).toMatch(
      // the fixture's stop came after a few steps, however many the machine managed
      /^\| c12 batched-prefill \| (\d+) \/ 200 \| stopped at step \1 \| stopped by the user before its verdict \|$/m,
    );
    expect(md).toMatch(
      /^- c12 batched-prefill: stopped by the user at step \d+ before its verdict, not judged\.$/m,
    );
    expect(section(md, 'Executive Summary')).toContain('12 cells: 5 GO, 6 NO-GO, 1 stopped');
  });

  it('CONDITIONAL GO names its conditions; a slow GO is flagged', () => {
    const md = report();
    expect(md).toMatch(
      /^\*\*Decision\*\*: \*\*CONDITIONAL GO\*\* ⚠️ — GO with `NSA_PREFILL_BATCHED=1` and `NSA_USE_FA2` unset; see Conditions for Full GO$/m,
    );
    const cond = md.slice(md.indexOf('### Conditions for Full GO'), md.indexOf('### Rationale'));
    expect(cond).toContain(
      "- `NSA_PREFILL_BATCHED=1`: without it `demo-many-flags`'s hang comes back (bisection b1).",
    );
    expect(cond).toContain('- c3 fp16 is NO-GO with no tested fix');
    expect(cond).toContain('- c5 demo-slow-prefill passed, but slow');
    expect(md).toMatch(/^### c5 demo-slow-prefill ✅ GO ⚠️ slow$/m);
    expect(md).toMatch(
      /^\| c5 demo-slow-prefill \| 3 \/ 3 \| none \| passed 3 steps, median 2 toks\/s; slow: /m,
    );
    expect(section(md, 'Executive Summary')).toContain('c5 demo-slow-prefill (slow)');
    // every cell passed but one was slow: still conditional, and it says why
    const slowOnly = buildReport(notebook(), { subject: 'x', cells: ['c2', 'c5'] });
    expect(slowOnly.decision).toBe('CONDITIONAL GO');
    expect(slowOnly.conditions).toEqual([expect.stringMatching(/^c5 demo-slow-prefill passed, but slow/)]);
  });

  it('says the bisection conclusion once; a not-reproduced bisection is worded as such', () => {
    const md = report();
    expect(md.split('NSA_PREFILL_BATCHED unset → hang at step 6').length - 1).toBe(1);
    const nb = notebook();
    const b = { ...nb.bisections![0]!, verdictClass: 'pass' };
    b.result = { ...b.result!, status: 'not-reproduced', minimal: [], proven: false, runs: 2 };
    const text = markdownSection(nb, b).join('\n');
    expect(text).not.toContain('failure class');
    expect(text).toContain('the bad side was GO here (pass), so there was no failure to search for');
    expect(text).toContain('**Conclusion**: the bad side is GO (pass): nothing to bisect');
  });

  it('compares throughput across cells and against a lane target', () => {
    const md = report();
    const perf = section(md, 'Performance');
    expect(perf).toContain(
      '- c5 demo-slow-prefill ran at 2 toks/s, 41× slower than c2 batched-prefill (81 toks/s); 20 s a step.',
    );
    expect(perf).toContain(
      "- c5 demo-slow-prefill: 2 toks/s, below its lane's target of 50 toks/s (4 % of it).",
    );
    expect(perf).toMatch(/^\| c5 demo-slow-prefill \| 2 \| 41× slower \| – \| 20\.\d\d \| 50 toks\/s \|$/m);
    expect(section(md, 'Executive Summary')).toContain(
      '- Performance: c5 demo-slow-prefill ran at 2 toks/s, 41× slower',
    );
  });

  it('merges the platform across cells; says when they disagree', () => {
    const nb = notebook();
    // the first cell without env.json must not make the header "unknown"
    nb.cells[0]!.platform = {};
    let m = buildReport(nb, { subject: 'x' });
    expect([m.pytorch, m.cuda]).toEqual(['2.11.0+cu130', '13.0']);
    expect(m.platform).toBe('1×NVIDIA H200 140GB (simulated: bundled demo trainer)');
    nb.cells[2]!.platform = { ...nb.cells[2]!.platform, torch: '2.4.0+cu121', cuda: '12.1' };
    m = buildReport(nb, { subject: 'x', cells: ['c1', 'c2', 'c3', 'c4'] });
    expect(m.pytorch).toBe('cells disagree: 2.11.0+cu130 (c2, c4); 2.4.0+cu121 (c3); not recorded by c1');
    expect(m.cuda).toBe('cells disagree: 13.0 (c2, c4); 12.1 (c3); not recorded by c1');
  });

  it('chart: a colour per shown cell, nice ticks, axis titles, end markers, a step axis that fits the runs', () => {
    const nb = notebook();
    // c1 and c8 shared a colour when it came from the cell number mod 7
    const two = buildReport(nb, { subject: 'x', cells: ['c1', 'c8', 'c12'] });
    const svg = renderSvg(
      two.rows.map((r) => r.cell),
      't',
    );
    const strokes = [...svg.matchAll(/<polyline fill="none" stroke="(#[0-9A-F]{6})"/g)].map((x) => x[1]);
    expect(new Set(strokes.slice(0, 3)).size).toBe(3);
    expect(svg).toContain('>loss</text>');
    expect(svg).toContain('>toks/s</text>');
    expect(svg).toContain('>step</text>');
    // markers where a run hung or was stopped, with their words
    expect(svg).toMatch(/fill="#0072B2">hang<\/text>/);
    expect(svg).toContain('>stopped</text>');
    // y ticks read 5.68 / 5.69 ..., the toks/s axis starts at 0, never below
    const ticks = [...svg.matchAll(/text-anchor="end" font-size="11">([^<]+)</g)].map((x) => x[1]!);
    expect(ticks).toContain('5.69');
    expect(ticks.every((t) => !t.startsWith('-'))).toBe(true);
    expect(ticks.filter((t) => /^\d\.\d{3,}$/.test(t))).toEqual([]);
    // 8-step runs beside a 1-step crash and a 100-step run: a log step axis, not a squeezed one
    const all = buildReport(nb, { subject: 'x' });
    const wide = renderSvg(
      all.rows.map((r) => r.cell),
      't',
    );
    expect(wide).toContain('>step (log scale)</text>');
    expect(svg).not.toContain('log scale');
  });

  it('keeps the summary short and the bulk folded: no long paths, commands and excerpts in <details>', () => {
    const md = report();
    const summary = section(md, 'Executive Summary').trim().split('\n');
    expect(summary.length).toBeLessThanOrEqual(10);
    expect(summary.join('\n')).not.toMatch(/\/src\/demo\//);
    const appendix = md.slice(md.indexOf('## Appendix: Cells'));
    expect(appendix.split('<summary>Command, env, output and evidence files</summary>').length - 1).toBe(12);
    // every fenced command sits inside a <details> block
    for (const part of md.split('```bash').slice(1)) {
      const before = md.slice(0, md.indexOf(part));
      expect(before.lastIndexOf('<details>')).toBeGreaterThan(before.lastIndexOf('</details>'));
    }
    // what is not folded away: the head sections and about ten lines a cell
    let inside = false;
    const visible = md.split('\n').filter((l) => {
      if (l === '<details>') inside = true;
      const shown = !inside;
      if (l === '</details>') inside = false;
      return shown;
    });
    expect(visible.length).toBeLessThan(130 + 12 * 12);
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

  it('JSON carries the same decision, rows, conditions and performance', () => {
    const r = writeReport({ notebookFile: NB, out: '-', format: 'json' });
    const j = JSON.parse(r.text);
    expect(j.decision).toBe('CONDITIONAL GO');
    expect(j.rows.map((x: { cellId: string; go: boolean | null }) => [x.cellId, x.go])).toEqual([
      ['c1', false],
      ['c2', true],
      ['c3', false],
      ['c4', false],
      ['c5', true],
      ['c6', true],
      ['c7', false],
      ['c8', true],
      ['c9', true],
      ['c10', false],
      ['c11', false],
      ['c12', null],
    ]);
    expect(j.conditions.length).toBeGreaterThan(0);
    expect(j.performance.findings[0]).toMatch(/^c5 demo-slow-prefill ran at 2 toks\/s/);
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

  it('decides GO only when every cell passed cleanly, NO-GO when none did', () => {
    const nb = notebook();
    const only = (ids: string[]) => buildReport(nb, { subject: 's', cells: ids }).decision;
    expect(only(['c2'])).toBe('GO');
    expect(only(['c2', 'c6'])).toBe('GO');
    expect(only(['c1', 'fp16'])).toBe('NO-GO');
    expect(only(['c2', 'c4'])).toBe('CONDITIONAL GO');
    // stopped before its verdict: not a NO-GO of its own, but no GO either
    expect(only(['c2', 'c12'])).toBe('CONDITIONAL GO');
    expect(only(['c12'])).toBe('NO-GO');
  });
});
