import { describe, expect, it } from 'vitest';
import { emptyNotebook } from '../../../src/notebook/model.js';
import { nextCellId, notebookReducer } from '../../../src/notebook/reducer.js';
import { newCell } from './cells.js';

const empty = emptyNotebook('2026-01-01T00:00:00.000Z');

describe('notebook reducer', () => {
  it('gives cells increasing ids that a delete never frees', () => {
    let nb = notebookReducer(empty, { type: 'addCell', cell: newCell('baseline') });
    nb = notebookReducer(nb, { type: 'addCell', cell: newCell('fp16') });
    expect(nb.cells.map((c) => c.id)).toEqual(['c1', 'c2']);
    nb = notebookReducer(nb, { type: 'deleteCell', id: 'c2' });
    expect(nextCellId(nb)).toBe('c3');
    nb = notebookReducer(nb, { type: 'addCell', cell: newCell('fa2') });
    expect(nb.cells.map((c) => c.id)).toEqual(['c1', 'c3']);
  });

  it('merges updates into one cell and keeps its id', () => {
    let nb = notebookReducer(empty, { type: 'addCell', cell: newCell('baseline') });
    nb = notebookReducer(nb, {
      type: 'updateCell',
      id: 'c1',
      patch: { state: 'done', verdict: 'hang', id: 'zz' } as never,
    });
    expect(nb.cells[0]).toMatchObject({ id: 'c1', state: 'done', verdict: 'hang', runId: 'run-baseline' });
  });

  it('returns the same object for actions on unknown cells (nothing to write)', () => {
    const nb = notebookReducer(empty, { type: 'addCell', cell: newCell('baseline') });
    expect(notebookReducer(nb, { type: 'deleteCell', id: 'c9' })).toBe(nb);
    expect(notebookReducer(nb, { type: 'updateCell', id: 'c9', patch: { state: 'done' } })).toBe(nb);
  });

  it('sets the report subject, blank clears it', () => {
    const nb = notebookReducer(empty, { type: 'setSubject', subject: ' Step 5 ' });
    expect(nb.subject).toBe('Step 5');
    expect(notebookReducer(nb, { type: 'setSubject', subject: ' ' }).subject).toBeUndefined();
  });
});
