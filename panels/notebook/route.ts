/**
 * Keys of the notebook view → UI actions and at most one effect for the controller. Pure: the
 * open overlay gets the key first, the binding table (src/notebook/keymap.ts) decides on the list.
 */
import type { QueuedView } from '../../src/notebook/controller-types.js';
import { flipFlag, isBinaryFlag, type KnownFlag, valueChoices } from '../../src/notebook/flags.js';
import {
  envCommandForKey,
  keyOf,
  type NotebookCommand,
  notebookCommandForKey,
  parsePalette,
} from '../../src/notebook/keymap.js';
import type { Cell } from '../../src/notebook/model.js';
import {
  editedEnv,
  envChanges,
  type NotebookUi,
  type NotebookUiAction,
} from '../../src/notebook/view-reducer.js';
import { type InkKeyFlags, printable } from '../key-router.js';

export type NotebookEffect =
  | { kind: 'start'; lane: string }
  /** the box check for a lane, recorded as a check cell */
  | { kind: 'check'; lane: string }
  | { kind: 'rerun'; id: string }
  | { kind: 'runEdited'; id: string; edits: Record<string, string | null> }
  | { kind: 'delete'; id: string }
  | { kind: 'unqueue'; qid: string }
  | { kind: 'bisect'; a: string; b: string }
  | { kind: 'open'; id: string }
  | { kind: 'report' }
  | { kind: 'notice'; text: string }
  | { kind: 'suspend' }
  | { kind: 'quit' };

export interface NotebookKeyContext {
  cells: readonly Cell[];
  lanes: ReadonlyArray<{ name: string; description: string }>;
  flags: readonly KnownFlag[];
  running: string | null;
  /** cells waiting to run; their rows follow the cells' */
  queued?: readonly QueuedView[];
  /** the notebook has a bisection to show */
  bisections?: number;
}

/** the list's rows: the cells, then the queued ones */
export function rowCount(ctx: Pick<NotebookKeyContext, 'cells' | 'queued'>): number {
  return ctx.cells.length + (ctx.queued?.length ?? 0);
}

/** the queued cell under the selection, when the selection is past the cells */
export function selectedQueued(
  ctx: Pick<NotebookKeyContext, 'cells' | 'queued'>,
  ui: NotebookUi,
): QueuedView | undefined {
  return ui.selected >= ctx.cells.length ? ctx.queued?.[ui.selected - ctx.cells.length] : undefined;
}

/** a variable name typed into the flag picker that no known flag has: offered as a new variable */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** the flag picker's items: the known flags matching the filter, and the typed name if it is new */
export function flagItems(flags: readonly KnownFlag[], text: string): KnownFlag[] {
  const matches = filterByName(flags, text);
  const t = text.trim();
  if (!ENV_NAME.test(t) || flags.some((f) => f.name === t)) return matches;
  return [...matches, { name: t, description: 'a new variable: type its value next', lanes: [], values: [] }];
}

export interface NotebookRouted {
  actions: NotebookUiAction[];
  effect?: NotebookEffect;
}

const NOTHING: NotebookRouted = { actions: [] };
const CLOSE: NotebookRouted = { actions: [{ type: 'close' }] };
/** a line on the status line, after `actions` (none: whatever is open stays) */
const notice = (text: string, actions: NotebookUiAction[] = []): NotebookRouted => ({
  actions,
  effect: { kind: 'notice', text },
});

export function filterByName<T extends { name: string; description: string }>(
  items: readonly T[],
  text: string,
): T[] {
  const f = text.trim().toLowerCase();
  if (!f) return [...items];
  const byName = items.filter((i) => i.name.toLowerCase().includes(f));
  return [...byName, ...items.filter((i) => !byName.includes(i) && i.description.toLowerCase().includes(f))];
}

function command(
  cmd: NotebookCommand | null,
  ui: NotebookUi,
  ctx: NotebookKeyContext,
  arg?: string,
): NotebookRouted {
  const cell = ctx.cells[ui.selected];
  const count = rowCount(ctx);
  const queued = selectedQueued(ctx, ui);
  // a queued cell has no run yet: it can only be taken off the queue
  if (queued && (cmd === 'open' || cmd === 'rerun' || cmd === 'env' || cmd === 'mark'))
    return notice(`${queued.qid} ${queued.lane} has not run yet (x takes it off the queue)`);
  // a box check is no run: no dashboard, no env to edit, nothing to compare or bisect
  if (cell?.kind === 'check' && (cmd === 'open' || cmd === 'env' || cmd === 'mark'))
    return notice(`${cell.id} is a box check: its checks are below; ${keyOf('rerun')} checks again`);
  switch (cmd) {
    case 'down':
      return { actions: [{ type: 'move', delta: 1, count }] };
    case 'up':
      return { actions: [{ type: 'move', delta: -1, count }] };
    case 'open':
      return cell ? { actions: [], effect: { kind: 'open', id: cell.id } } : NOTHING;
    case 'new':
      if (arg) return { actions: [{ type: 'close' }], effect: { kind: 'start', lane: arg } };
      return { actions: [{ type: 'open', mode: 'lanes' }] };
    case 'check': {
      // a lane named (:check NAME), else the selected cell's, else one picked
      const lane = arg ?? (queued ? undefined : cell?.lane.name);
      if (lane) return { actions: [{ type: 'close' }], effect: { kind: 'check', lane } };
      return { actions: [{ type: 'pickCheckLane' }] };
    }
    case 'rerun':
      return cell ? { actions: [{ type: 'close' }], effect: { kind: 'rerun', id: cell.id } } : NOTHING;
    case 'env':
      return cell ? { actions: [{ type: 'openEnv', cellId: cell.id }] } : NOTHING;
    case 'mark':
      return cell ? { actions: [{ type: 'mark', id: cell.id }] } : NOTHING;
    case 'compare':
      if (ui.marked.length < 2) return notice('mark two cells with m first', CLOSE.actions);
      return { actions: [{ type: 'open', mode: 'compare' }] };
    case 'bisect':
      // two marks start one; without them, the newest bisection's table
      if (ui.marked.length === 2)
        return {
          actions: [{ type: 'open', mode: 'bisect' }],
          effect: { kind: 'bisect', a: ui.marked[0]!, b: ui.marked[1]! },
        };
      if (ctx.bisections) return { actions: [{ type: 'open', mode: 'bisect' }] };
      return notice('mark a GO cell and a NO-GO cell with m, then :bisect', CLOSE.actions);
    case 'delete':
      return cell || queued ? { actions: [{ type: 'open', mode: 'confirmDelete' }] } : NOTHING;
    case 'report':
      return { actions: [{ type: 'close' }], effect: { kind: 'report' } };
    case 'palette':
      return { actions: [{ type: 'open', mode: 'palette' }] };
    case 'help':
      return { actions: [{ type: ui.mode === 'help' ? 'close' : 'open', mode: 'help' } as NotebookUiAction] };
    case 'suspend':
      return { actions: [], effect: { kind: 'suspend' } };
    case 'quit':
      return ctx.running || ctx.queued?.length
        ? { actions: [{ type: 'open', mode: 'quit' }] }
        : { actions: [], effect: { kind: 'quit' } };
    case null:
      return NOTHING;
  }
}

/** typing into a picker or the palette; Enter in the same chunk still chooses */
function typing(input: string, key: InkKeyFlags, count: number): NotebookRouted | 'enter' {
  if (key.return) return 'enter';
  if (key.upArrow) return { actions: [{ type: 'pickMove', delta: -1, count }] };
  if (key.downArrow) return { actions: [{ type: 'pickMove', delta: 1, count }] };
  if (key.backspace || key.delete) return { actions: [{ type: 'pickBackspace' }] };
  if (key.ctrl || key.meta) return NOTHING;
  const text = printable(input.replace(/[\r\n]/g, ''));
  return text ? { actions: [{ type: 'pickType', text }] } : NOTHING;
}

function envKeys(input: string, key: InkKeyFlags, ui: NotebookUi, ctx: NotebookKeyContext): NotebookRouted {
  const env = ui.env!;
  const cell = ctx.cells.find((c) => c.id === env.cellId);
  if (!cell) return CLOSE;
  const rows = editedEnv(cell.env, env.edits);
  const row = rows[env.index];
  switch (envCommandForKey(input, key)) {
    case 'close':
      return CLOSE;
    case 'run':
      if (envChanges(cell.env, env.edits).length === 0)
        return notice('no change yet: space flips a flag, = types a value, f picks one');
      return { actions: [{ type: 'close' }], effect: { kind: 'runEdited', id: cell.id, edits: env.edits } };
    case 'down':
      return { actions: [{ type: 'envMove', delta: 1, count: rows.length }] };
    case 'up':
      return { actions: [{ type: 'envMove', delta: -1, count: rows.length }] };
    case 'flip': {
      if (!row) return NOTHING;
      const known = ctx.flags.find((f) => f.name === row[0]);
      // a flag with other values (NSA_FORCE_BRANCH: cmp|sel|win) has no 0↔1: its values are offered
      if (!isBinaryFlag(known)) return { actions: [{ type: 'openValue', name: row[0] }] };
      return { actions: [{ type: 'envSet', name: row[0], value: flipFlag(row[1]) }] };
    }
    case 'value':
      return row ? { actions: [{ type: 'openValue', name: row[0] }] } : NOTHING;
    case 'unset':
      return row ? { actions: [{ type: 'envSet', name: row[0], value: null }] } : NOTHING;
    case 'flags':
      return { actions: [{ type: 'openFlags' }] };
    case null:
      return NOTHING;
  }
}

/** the value entry: typed text or one of the known values, Enter sets it, Esc back to the editor */
function valueKeys(input: string, key: InkKeyFlags, ui: NotebookUi, ctx: NotebookKeyContext): NotebookRouted {
  const name = ui.env?.editing;
  if (!name || key.escape) return { actions: [{ type: 'closeFlags' }] };
  const choices = valueChoices(ctx.flags, name, ui.pick.text);
  const t = typing(input, key, choices.length);
  if (t !== 'enter') return t;
  const value = choices[ui.pick.index];
  if (value === undefined) return notice(`type a value for ${name} (u in the editor unsets it)`);
  return { actions: [{ type: 'envSet', name, value }, { type: 'closeFlags' }] };
}

export function routeNotebookKey(
  input: string,
  key: InkKeyFlags,
  ui: NotebookUi,
  ctx: NotebookKeyContext,
): NotebookRouted {
  // suspending leaves whatever is open (a picker, the env editor) as it is, to come back to
  if (notebookCommandForKey(input, key) === 'suspend') return { actions: [], effect: { kind: 'suspend' } };
  switch (ui.mode) {
    case 'list':
      return command(notebookCommandForKey(input, key), ui, ctx);
    case 'help':
    case 'compare':
    case 'bisect':
      return key.escape || key.return || input === 'q' || (ui.mode === 'help' && input === '?')
        ? CLOSE
        : NOTHING;
    case 'confirmDelete': {
      const cell = ctx.cells[ui.selected];
      const queued = selectedQueued(ctx, ui);
      if ((input === 'y' || input === 'Y') && queued)
        return { actions: [{ type: 'close' }], effect: { kind: 'unqueue', qid: queued.qid } };
      if ((input === 'y' || input === 'Y') && cell)
        return { actions: [{ type: 'close' }], effect: { kind: 'delete', id: cell.id } };
      // anything else, Enter included, is the default: No
      return CLOSE;
    }
    case 'quit':
      if (input === 'y' || input === 'Y') return { actions: [], effect: { kind: 'quit' } };
      return CLOSE;
    case 'lanes': {
      if (key.escape) return CLOSE;
      const matches = filterByName(ctx.lanes, ui.pick.text);
      const t = typing(input, key, matches.length);
      if (t !== 'enter') return t;
      const lane = matches[ui.pick.index];
      if (!lane) return NOTHING;
      const kind = ui.lanesFor === 'check' ? 'check' : 'start';
      return { actions: [{ type: 'close' }], effect: { kind, lane: lane.name } };
    }
    case 'flags': {
      if (key.escape) return { actions: [{ type: 'closeFlags' }] };
      const matches = flagItems(ctx.flags, ui.pick.text);
      const t = typing(input, key, matches.length);
      if (t !== 'enter') return t;
      const flag = matches[ui.pick.index];
      const cell = ctx.cells.find((c) => c.id === ui.env?.cellId);
      if (!flag || !cell || !ui.env) return NOTHING;
      // a 0/1 flag flips at once (the quick A/B); any other is given a value
      if (!isBinaryFlag(flag) || (flag.values.length === 0 && flag.lanes.length === 0))
        return { actions: [{ type: 'openValue', name: flag.name }] };
      const current =
        flag.name in ui.env.edits ? (ui.env.edits[flag.name] ?? undefined) : cell.env[flag.name];
      return {
        actions: [{ type: 'envSet', name: flag.name, value: flipFlag(current) }, { type: 'closeFlags' }],
      };
    }
    case 'env':
      return envKeys(input, key, ui, ctx);
    case 'value':
      return valueKeys(input, key, ui, ctx);
    case 'palette': {
      if (key.escape) return CLOSE;
      const t = typing(input, key, 0);
      if (t !== 'enter') return t;
      const parsed = parsePalette(ui.pick.text);
      if ('error' in parsed) return notice(parsed.error, CLOSE.actions);
      const routed = command(parsed.command, { ...ui, mode: 'list' }, ctx, parsed.arg);
      // the palette closes first; the command may open its own overlay
      return { actions: [{ type: 'close' }, ...routed.actions], effect: routed.effect };
    }
  }
}
