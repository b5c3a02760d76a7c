/**
 * Every change to a notebook is one of these actions, applied by a pure reducer; the store writes
 * the result atomically. The TUI, `run --headless --notebook` and the tests share this one path.
 */
import type { BisectionRecord } from './bisection-record.js';
import type { Cell, Notebook } from './model.js';

export type NewCell = Omit<Cell, 'id'>;

export type NotebookAction =
  /** append a cell; the reducer gives it the next id (c1, c2, ...; never reused) */
  | { type: 'addCell'; cell: NewCell }
  /** merge fields into a cell (state, times, verdict, summary, series ...) */
  | { type: 'updateCell'; id: string; patch: Partial<Omit<Cell, 'id'>> }
  | { type: 'deleteCell'; id: string }
  | { type: 'setSubject'; subject: string }
  /** a flag bisection: the reducer gives it the next id (b1, b2, ...) */
  | { type: 'addBisection'; bisection: Omit<BisectionRecord, 'id'> }
  | { type: 'updateBisection'; id: string; patch: Partial<Omit<BisectionRecord, 'id'>> };

export function notebookReducer(nb: Notebook, action: NotebookAction): Notebook {
  switch (action.type) {
    case 'addCell': {
      const cell: Cell = { id: `c${nb.nextId}`, ...action.cell };
      return { ...nb, nextId: nb.nextId + 1, cells: [...nb.cells, cell] };
    }
    case 'updateCell': {
      if (!nb.cells.some((c) => c.id === action.id)) return nb;
      return {
        ...nb,
        cells: nb.cells.map((c) => (c.id === action.id ? { ...c, ...action.patch, id: c.id } : c)),
      };
    }
    case 'deleteCell': {
      if (!nb.cells.some((c) => c.id === action.id)) return nb;
      return { ...nb, cells: nb.cells.filter((c) => c.id !== action.id) };
    }
    case 'setSubject':
      return { ...nb, subject: action.subject.trim() || undefined };
    case 'addBisection': {
      const list = nb.bisections ?? [];
      return { ...nb, bisections: [...list, { id: `b${list.length + 1}`, ...action.bisection }] };
    }
    case 'updateBisection': {
      if (!nb.bisections?.some((b) => b.id === action.id)) return nb;
      return {
        ...nb,
        bisections: nb.bisections.map((b) => (b.id === action.id ? { ...b, ...action.patch, id: b.id } : b)),
      };
    }
  }
}

/** the id the next addCell will get (callers that must name the new cell before writing it) */
export function nextCellId(nb: Notebook): string {
  return `c${nb.nextId}`;
}
