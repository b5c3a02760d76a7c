/**
 * The report's "Last words": present in a cell whose analysis holds last words (the ranks' stacks
 * when a signal ended them, as `analyze` and the live session record them), absent otherwise. The
 * last words are the real ones of test/fixtures/last-words/torchrun-crash, read by the run-folder
 * reader; the notebook is the report's fixture of real demo runs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Evidence } from '../../../src/analysis/evidence.js';
import { RunFolderReader } from '../../../src/ingest/run-folder.js';
import { parseNotebook } from '../../../src/notebook/store.js';
import { renderMarkdown } from '../../../src/report/markdown.js';
import { buildReport } from '../../../src/report/model.js';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures');
const NB = join(FIX, 'report', 'notebook.json');

function lastWordsOfFixture() {
  const ev = new Evidence();
  const reader = new RunFolderReader(ev);
  const dir = join(FIX, 'last-words', 'torchrun-crash');
  for (const f of readdirSync(dir)) reader.push(f, readFileSync(join(dir, f)));
  reader.end();
  return ev.result({}).lastWords;
}

const render = (nb: ReturnType<typeof parseNotebook>) =>
  renderMarkdown(buildReport(nb, { subject: 'x' }), { notebook: 'n.json' });

describe("the report's Last words", () => {
  it('no cell has last words: no such section', () => {
    expect(render(parseNotebook(readFileSync(NB, 'utf8'), NB))).not.toContain('Last words');
  });

  it("a cell with last words: the section, under that cell, with the ranks' places", () => {
    const nb = parseNotebook(readFileSync(NB, 'utf8'), NB);
    const cell = nb.cells[0]!;
    cell.analysis = { ...(cell.analysis ?? {}), lastWords: lastWordsOfFixture() };
    const md = render(nb);
    expect(md.match(/#### Last words/g)).toHaveLength(1);
    const section = md.slice(md.indexOf('#### Last words'));
    expect(section).toMatch(
      /- ranks 0 and 1 — SIGTERM at \d\d:\d\d:\d\d UTC: waiting in all_reduce \(distributed_c10d\.py:1541\)/,
    );
    // it sits in the first cell's section, before the next cell's heading
    const cells = md.split('\n### ');
    expect(cells.filter((c) => c.includes('#### Last words'))).toHaveLength(1);
  });

  it('an OOM kill and the teardown snapshot (the real folder last-words/torchrun-oom): in the same section', async () => {
    const r = await analyzeDir(join(FIX, 'last-words', 'torchrun-oom'));
    const nb = parseNotebook(readFileSync(NB, 'utf8'), NB);
    const cell = nb.cells[0]!;
    cell.analysis = { ...(cell.analysis ?? {}), ...JSON.parse(JSON.stringify(r)) };
    const section = render(nb).split('#### Last words')[1]!.split('\n### ')[0]!;
    expect(section).toContain(
      '- rank 2 — killed by SIGKILL: the kernel log says OOM killer (a cgroup memory limit), 210 MiB RSS (pid 3062)',
    );
    expect(section).toContain(
      "- nsa-dbg's look at the first sign of teardown: when rank 2 exited, ranks 0 and 1 were in state S (sleeping, wchan futex_do_wait, 7% CPU)",
    );
    expect(section).toMatch(/- ranks 0 and 1 — SIGTERM at .*: waiting in all_reduce/);
  });
});
