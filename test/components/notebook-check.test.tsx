/**
 * The notebook screen with box checks: a box the notebook has not seen is offered the check (the
 * line worded from the key table), a check cell's row says its counts and its detail lists its
 * fail lines before its warn lines with measured value, expected value and source; the check's
 * lane picker shows no trainer command.
 */
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { NotebookScreen } from '../../panels/notebook/NotebookScreen.js';
import { checkedPatch, newCheckCell } from '../../src/notebook/check-cell.js';
import type { NotebookViewState } from '../../src/notebook/controller-types.js';
import { newBoxOffer } from '../../src/notebook/keymap.js';
import { emptyNotebook, type Notebook } from '../../src/notebook/model.js';
import { notebookReducer } from '../../src/notebook/reducer.js';
import { initialNotebookUi, type NotebookUi } from '../../src/notebook/view-reducer.js';
import { combine } from '../../src/preflight/format.js';
import { judgeBox } from '../../src/preflight/verdict.js';
import { frameLines } from '../helpers/render.js';
import { ask, probe } from '../unit/preflight/fixtures.js';

const T = new Date('2026-11-26T14:00:00Z');
const lane = {
  name: 'ddp-nccl',
  description: 'two ranks',
  source: '',
  sourceHash: '',
  env: {},
  args: [],
  acceptance: { finiteLoss: true, noStall: true },
};
const lanes = [
  { name: 'ddp-nccl', description: 'two ranks', runs: { command: 'python3 train.py', cwd: '/w' } },
];

function checkedNotebook(): Notebook {
  const run = combine('ddp-nccl', [judgeBox(probe('h100x1', 'foreign'), ask())], 21.3);
  let nb = emptyNotebook(T.toISOString());
  nb = notebookReducer(nb, {
    type: 'addCell',
    cell: newCheckCell({ lane, target: 'gpu1', demo: false, now: T }),
  });
  return notebookReducer(nb, { type: 'updateCell', id: 'c1', patch: checkedPatch(run, T) });
}

function screen(notebook: Notebook, box: NotebookViewState['box'], ui: NotebookUi = initialNotebookUi) {
  const state: NotebookViewState = {
    file: 'nb.json',
    notebook,
    stale: [],
    running: null,
    box,
    live: null,
    queued: [],
    notice: null,
  };
  return frameLines(
    render(
      <NotebookScreen
        state={state}
        ui={ui}
        lanes={lanes}
        flags={[]}
        columns={200}
        rows={30}
        color={false}
        notice={null}
      />,
    ).lastFrame(),
  ).join('\n');
}

describe('the notebook screen with box checks', () => {
  it('offers the check on a box it has not seen, and not on one it has', () => {
    const empty = emptyNotebook(T.toISOString());
    expect(screen(empty, { target: 'user@gpu1', seen: false })).toContain(newBoxOffer('user@gpu1'));
    expect(screen(checkedNotebook(), { target: 'gpu1', seen: true })).not.toContain('new box');
  });

  it("a check cell's row and detail: counts, then fail lines before warn lines with expected value and source", () => {
    const text = screen(checkedNotebook(), { target: 'gpu1', seen: true });
    expect(text).toMatch(
      /c1\s+NO-GO ddp-nccl\s+box check of gpu1: [1-9]\d* failed, \d+ warnings?, \d+ passed \(21\.3 s\)/,
    );
    const detail = text.split('\n').filter((l) => /^(FAIL|WARN) /.test(l));
    expect(detail.length).toBeGreaterThan(0);
    expect(detail[0]).toMatch(/^FAIL GPU 0 other processes and their memory: .*\(expected .*; nvidia-smi/);
    const firstWarn = detail.findIndex((l) => l.startsWith('WARN'));
    if (firstWarn >= 0) expect(detail.slice(firstWarn).every((l) => l.startsWith('WARN'))).toBe(true);
    // a check cell has no evidence folder to show
    expect(text).not.toContain('runs/');
  });

  it("the check's lane picker is titled for the target and shows no trainer command", () => {
    const picker: NotebookUi = { ...initialNotebookUi, mode: 'lanes', lanesFor: 'check' };
    const text = screen(emptyNotebook(T.toISOString()), { target: 'gpu1', seen: false }, picker);
    expect(text).toContain('check gpu1 for lane');
    expect(text).not.toContain('python3 train.py');
    const plain = screen(
      emptyNotebook(T.toISOString()),
      { target: 'gpu1', seen: false },
      { ...picker, lanesFor: undefined },
    );
    expect(plain).toContain('new cell from lane');
    expect(plain).toContain('python3 train.py');
  });
});
