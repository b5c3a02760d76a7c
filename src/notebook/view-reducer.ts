/**
 * The notebook view's UI state machine: selection, marks, and which overlay is open (help, delete
 * confirm, lane picker, env editor, flag picker, palette, compare). Pure; the App turns keys into
 * these actions and runs the controller calls itself.
 */
import { withEdits } from './env-diff.js';

export type NotebookMode =
  | 'list'
  | 'help'
  | 'confirmDelete'
  | 'lanes'
  | 'env'
  | 'flags'
  /** the env editor's value entry for one variable */
  | 'value'
  | 'palette'
  | 'compare'
  | 'bisect'
  | 'quit';

export interface NotebookUi {
  mode: NotebookMode;
  /** index of the selected cell */
  selected: number;
  /** marked cell ids, oldest first; at most two (compare) */
  marked: string[];
  /** the lane / flag picker's filter, or the palette's text */
  pick: { text: string; index: number };
  /** what the lane picker's Enter does: start a cell (absent), or check the box for the lane */
  lanesFor?: 'check';
  /**
   * the env editor: the cell it edits, the highlighted variable, the edits (null = unset), and the
   * variable whose value is being typed (mode `value`; the text is in `pick`)
   */
  env: { cellId: string; index: number; edits: Record<string, string | null>; editing?: string } | null;
}

export type NotebookUiAction =
  | { type: 'move'; delta: number; count: number }
  | { type: 'select'; index: number; count: number }
  | { type: 'mark'; id: string }
  | { type: 'open'; mode: 'help' | 'confirmDelete' | 'lanes' | 'palette' | 'compare' | 'bisect' | 'quit' }
  | { type: 'close' }
  /** the lane picker, whose Enter checks the box for the picked lane */
  | { type: 'pickCheckLane' }
  | { type: 'openEnv'; cellId: string }
  | { type: 'envMove'; delta: number; count: number }
  | { type: 'envSet'; name: string; value: string | null }
  | { type: 'openFlags' }
  /** back from the flag picker to the editor */
  | { type: 'closeFlags' }
  /** type a value for `name` (the text goes into `pick`) */
  | { type: 'openValue'; name: string }
  | { type: 'pickType'; text: string }
  | { type: 'pickBackspace' }
  | { type: 'pickMove'; delta: number; count: number };

export const initialNotebookUi: NotebookUi = {
  mode: 'list',
  selected: 0,
  marked: [],
  pick: { text: '', index: 0 },
  env: null,
};

/** an index kept within a list of `count` items (0 for an empty one) */
const within = (v: number, count: number) => (count ? Math.min(count - 1, Math.max(0, v)) : 0);
const EMPTY_PICK = { text: '', index: 0 };

export function notebookUiReducer(s: NotebookUi, a: NotebookUiAction): NotebookUi {
  switch (a.type) {
    case 'move':
      return { ...s, selected: within(s.selected + a.delta, a.count) };
    case 'select':
      return { ...s, selected: within(a.index, a.count) };
    case 'mark': {
      if (s.marked.includes(a.id)) return { ...s, marked: s.marked.filter((m) => m !== a.id) };
      // a third mark drops the oldest: compare always shows the last two picked
      return { ...s, marked: [...s.marked, a.id].slice(-2) };
    }
    case 'open':
      return { ...s, mode: a.mode, pick: EMPTY_PICK, lanesFor: undefined };
    case 'pickCheckLane':
      return { ...s, mode: 'lanes', pick: EMPTY_PICK, lanesFor: 'check' };
    case 'close':
      return { ...s, mode: 'list', pick: EMPTY_PICK, env: null, lanesFor: undefined };
    case 'openEnv':
      return { ...s, mode: 'env', env: { cellId: a.cellId, index: 0, edits: {} }, pick: EMPTY_PICK };
    case 'envMove':
      if (!s.env) return s;
      return { ...s, env: { ...s.env, index: within(s.env.index + a.delta, a.count) } };
    case 'envSet':
      if (!s.env) return s;
      return { ...s, env: { ...s.env, edits: { ...s.env.edits, [a.name]: a.value } } };
    case 'openFlags':
      return s.env ? { ...s, mode: 'flags', pick: EMPTY_PICK } : s;
    case 'closeFlags':
      return s.env
        ? { ...s, mode: 'env', pick: EMPTY_PICK, env: { ...s.env, editing: undefined } }
        : { ...s, mode: 'list' };
    case 'openValue':
      return s.env ? { ...s, mode: 'value', pick: EMPTY_PICK, env: { ...s.env, editing: a.name } } : s;
    case 'pickType':
      return { ...s, pick: { text: s.pick.text + a.text, index: 0 } };
    case 'pickBackspace':
      return { ...s, pick: { text: s.pick.text.slice(0, -1), index: 0 } };
    case 'pickMove':
      return { ...s, pick: { ...s.pick, index: within(s.pick.index + a.delta, a.count) } };
  }
}

/** the env the editor shows: the cell's, with the edits applied (unset ones dropped), sorted */
export function editedEnv(
  env: Record<string, string>,
  edits: Record<string, string | null>,
): Array<[string, string]> {
  return Object.entries(withEdits(env, edits)).sort((a, b) => a[0].localeCompare(b[0]));
}

/** what the edits change, one entry per variable: `NSA_FORCE_BRANCH unset → sel`, `NSA_USE_FA2 1 → 0` */
export function envChanges(env: Record<string, string>, edits: Record<string, string | null>): string[] {
  return Object.entries(edits)
    .filter(([k, v]) => (env[k] ?? null) !== v)
    .map(([k, v]) => `${k} ${env[k] ?? 'unset'} → ${v ?? 'unset'}`);
}
