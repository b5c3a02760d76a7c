/**
 * The report's platform check: the notebook of real demo runs (test/fixtures/report/notebook.json)
 * with box checks judged from real H100 captures (test/fixtures/preflight) added as check cells.
 * Each box shows its newest check's verdict in the header and its fail and warn lines in the
 * Platform Check section; check cells are no runs; a notebook without checks gets nothing extra.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkedPatch, checkFailedPatch, newCheckCell } from '../../../src/notebook/check-cell.js';
import type { Notebook } from '../../../src/notebook/model.js';
import { nextCellId, notebookReducer } from '../../../src/notebook/reducer.js';
import { parseNotebook } from '../../../src/notebook/store.js';
import { combine } from '../../../src/preflight/format.js';
import { judgeBox } from '../../../src/preflight/verdict.js';
import { renderMarkdown } from '../../../src/report/markdown.js';
import { buildReport } from '../../../src/report/model.js';
import { ask, probe } from '../preflight/fixtures.js';

const NB = join(import.meta.dirname, '..', '..', 'fixtures', 'report', 'notebook.json');
const notebook = () => parseNotebook(readFileSync(NB, 'utf8'), NB);
const foreign = combine('baseline', [judgeBox(probe('h100x1', 'foreign'), ask())], 21.3);
const healthy = combine('baseline', [judgeBox(probe('h100x1', 'healthy'), ask())], 12.0);

function withCheck(nb: Notebook, target: string, run: typeof foreign | null, at: string): Notebook {
  const id = nextCellId(nb);
  const lane = nb.cells[0]!.lane;
  const now = new Date(at);
  nb = notebookReducer(nb, { type: 'addCell', cell: newCheckCell({ lane, target, demo: false, now }) });
  const patch = run ? checkedPatch(run, now) : checkFailedPatch('cannot connect to gpu9', now);
  return notebookReducer(nb, { type: 'updateCell', id, patch });
}

const report = (nb: Notebook, cells?: string[]) =>
  buildReport(nb, { subject: 'ab', ...(cells ? { cells } : {}) });
const md = (nb: Notebook) => renderMarkdown(report(nb), { notebook: 'ab.json' });

describe("the report's platform check", () => {
  it('no box checked: nothing extra, the report as before', () => {
    const nb = notebook();
    expect(report(nb).boxChecks).toEqual([]);
    const text = md(nb);
    expect(text).not.toContain('Box check');
    expect(text).not.toContain('Platform Check');
  });

  it("each box's newest check: its verdict in the header, its fail then warn lines with measured, expected and source", () => {
    const base = notebook();
    const target = base.cells[0]!.target;
    let nb = withCheck(base, target, healthy, '2026-11-26T13:00:00Z');
    nb = withCheck(nb, target, foreign, '2026-11-26T14:00:00Z');
    const m = report(nb);
    expect(m.boxChecks).toHaveLength(1);
    const b = m.boxChecks[0]!;
    expect(b).toMatchObject({ target, verdict: 'NO-GO', cellId: nb.cells[nb.cells.length - 1]!.id });
    expect(b.failed).toBeGreaterThan(0);
    expect(b.lines[0]).toMatch(/^fail: GPU 0 other processes and their memory: .* \(expected .*; nvidia-smi/);
    const firstWarn = b.lines.findIndex((l) => l.startsWith('warn: '));
    if (firstWarn >= 0) expect(b.lines.slice(firstWarn).every((l) => l.startsWith('warn: '))).toBe(true);
    const text = md(nb);
    expect(text).toContain(
      `**Box check** \`${target}\`: **NO-GO** (${b.cellId}, lane \`${b.lane}\`, 2026-11-26 14:00 UTC: ${b.failed} failed`,
    );
    expect(text).toMatch(/## Platform Check\n\n### `.*`: NO-GO/);
    for (const l of b.lines) expect(text).toContain(`- ${l}`);
    // the healthy check before it is not shown
    expect(text.match(/\*\*Box check\*\*/g)).toHaveLength(1);
  });

  it('check cells are no runs: not in the results, the cell count or the decision', () => {
    const base = notebook();
    const before = report(base);
    const nb = withCheck(base, base.cells[0]!.target, foreign, '2026-11-26T14:00:00Z');
    const after = report(nb);
    expect(after.rows.map((r) => r.cell.id)).toEqual(before.rows.map((r) => r.cell.id));
    expect(after.decision).toBe(before.decision);
    expect(after.performance).toEqual(before.performance);
  });

  it('two boxes each with their own check; one that could not run says why; a --cells pick keeps its runs’ boxes', () => {
    const base = notebook();
    const target = base.cells[0]!.target;
    let nb = withCheck(base, target, healthy, '2026-11-26T13:00:00Z');
    nb = withCheck(nb, 'user@gpu9', null, '2026-11-26T13:30:00Z');
    const all = report(nb).boxChecks;
    expect(all.map((b) => [b.target, b.verdict])).toEqual([
      [target, 'GO'],
      ['user@gpu9', 'no verdict'],
    ]);
    expect(all[1]!.lines).toEqual(['no verdict: cannot connect to gpu9']);
    expect(md(nb)).toContain('**Box check** `user@gpu9`: **no verdict**');
    // only the first run picked: only its box's check
    expect(report(nb, [base.cells[0]!.id]).boxChecks.map((b) => b.target)).toEqual([target]);
  });
});
