/**
 * Routes one key event to UI actions and at most one side effect. The open overlay gets the key
 * first (so typing "q" in the lane filter filters, it does not quit); on the bare dashboard the one
 * binding table (`commandForKey`) decides. Pure, so the App's `useInput` handler stays a thin shell.
 */
import type { KeyFlags } from '../src/session/key-binding.js';
import {
  type Command,
  commandForKey,
  type KeyState,
  LIVE_KEYS,
  unavailableReason,
} from '../src/session/keymap.js';
import type { LaneSummary } from '../src/session/state.js';
import { filterLanes, type UiAction, type UiState } from '../src/session/ui-reducer.js';

/** Ink's key flags we look at, beyond the ones the binding table uses. */
export interface InkKeyFlags extends KeyFlags {
  backspace?: boolean;
  delete?: boolean;
}

export type KeyEffect =
  | { kind: 'dump' }
  | { kind: 'hotFrames' }
  | { kind: 'killNow' }
  | { kind: 'switchLane'; lane: string }
  | { kind: 'quit' }
  | { kind: 'cancelJob' }
  | { kind: 'terminal' }
  | { kind: 'suspend' }
  /** a key that cannot act now says why on the status line */
  | { kind: 'notice'; text: string };

export interface KeyContext {
  lanes: readonly LaneSummary[];
  /** lines in one log page (the visible log height) */
  logPage: number;
  /** how far up the log can scroll */
  maxScroll: number;
  /** the stop ladder is running: `q` again kills at once */
  stopping?: boolean;
  /** what decides whether a key can act now (default: a live run on the plain dashboard) */
  keys?: KeyState;
}

export interface Routed {
  actions: UiAction[];
  effect?: KeyEffect;
}

const NOTHING: Routed = { actions: [] };

/** "yy" typed fast arrives as one chunk: treat a run of one repeated character as that character. */
function singleKey(input: string): string {
  return input.length > 1 && [...input].every((c) => c === input[0]) ? input[0]! : input;
}

/** Printable characters only: control bytes from odd terminals must not land in a filter. */
export function printable(input: string): string {
  return [...input].filter((c) => c >= ' ' && c !== '\u007f').join('');
}

function routeDashboard(command: Command | null, ctx: KeyContext, input: string, key: KeyFlags): Routed {
  const keys = ctx.keys ?? LIVE_KEYS;
  const why = command ? unavailableReason(command, keys) : null;
  if (why) return { actions: [], effect: { kind: 'notice', text: why } };
  const scroll = (delta: number): Routed => ({
    actions: [{ type: 'scroll', delta, maxScroll: ctx.maxScroll }],
  });
  const page = Math.max(1, ctx.logPage - 1);
  switch (command) {
    case 'dump':
    case 'hotFrames':
    case 'terminal':
    case 'suspend':
      return { actions: [], effect: { kind: command } };
    case 'lanes':
      return { actions: [{ type: 'openLanes' }] };
    case 'quit':
      // a second `q` while the run is being stopped: no more waiting for SIGINT, SIGKILL now
      if (ctx.stopping) return { actions: [], effect: { kind: 'killNow' } };
      // a notebook cell's dashboard: `q` is "back", nothing to confirm
      return keys.quitAsks ? { actions: [{ type: 'openQuit' }] } : { actions: [], effect: { kind: 'quit' } };
    case 'help':
      return { actions: [{ type: 'toggleHelp' }] };
    case 'cancelJob':
      return { actions: [{ type: 'openCancelJob' }] };
    case 'scrollUp':
      return scroll(1);
    case 'scrollDown':
      return scroll(-1);
    case 'pageUp':
      return scroll(page);
    case 'pageDown':
      return scroll(-page);
    case 'follow':
      return { actions: [{ type: 'follow' }] };
    case null:
      // a single typed character that is no key here: say so rather than nothing at all
      if ([...input].length === 1 && printable(input) === input && !key.ctrl && !key.meta)
        return {
          actions: [],
          effect: { kind: 'notice', text: `${input} is not a key here: ? lists the keys` },
        };
      return NOTHING;
  }
}

function routePicker(input: string, key: InkKeyFlags, ui: UiState, ctx: KeyContext): Routed {
  const matches = filterLanes(ctx.lanes, ui.picker.filter);
  if (key.escape) return { actions: [{ type: 'close' }] };
  if (key.return) {
    const lane = matches[ui.picker.index];
    return lane ? { actions: [{ type: 'pickerChoose', lane: lane.name }] } : NOTHING;
  }
  if (key.upArrow) return { actions: [{ type: 'pickerMove', delta: -1, count: matches.length }] };
  if (key.downArrow) return { actions: [{ type: 'pickerMove', delta: 1, count: matches.length }] };
  if (key.backspace || key.delete) return { actions: [{ type: 'pickerBackspace' }] };
  if (key.ctrl || key.meta) return NOTHING;
  // Typed fast (or over a slow link), "batch" and Enter can arrive as one chunk "batch\r": the
  // text goes into the filter and the Enter still chooses from the filtered list.
  const enter = input.search(/[\r\n]/);
  if (enter >= 0) {
    const text = printable(input.slice(0, enter));
    const lane = filterLanes(ctx.lanes, ui.picker.filter + text)[text ? 0 : ui.picker.index];
    const typed: UiAction[] = text ? [{ type: 'pickerType', text }] : [];
    return lane ? { actions: [...typed, { type: 'pickerChoose', lane: lane.name }] } : { actions: typed };
  }
  const text = printable(input);
  return text ? { actions: [{ type: 'pickerType', text }] } : NOTHING;
}

export function routeKey(input: string, key: InkKeyFlags, ui: UiState, ctx: KeyContext): Routed {
  const ch = singleKey(input);
  // suspending leaves whatever is open as it is, to come back to
  if (ui.overlay !== 'none' && commandForKey(input, key) === 'suspend')
    return { actions: [], effect: { kind: 'suspend' } };
  switch (ui.overlay) {
    case 'none':
      return routeDashboard(commandForKey(input, key), ctx, input, key);
    case 'help':
      // Any of the ways a user tries to leave works; other keys are ignored rather than acted on
      // behind the overlay.
      return key.escape || key.return || ch === '?' || ch === 'q'
        ? { actions: [{ type: 'close' }] }
        : NOTHING;
    case 'quit':
      // a second Ctrl+C confirms, as users expect from terminal tools
      if (ch === 'y' || ch === 'Y' || (key.ctrl && input === 'c'))
        return { actions: [], effect: { kind: 'quit' } };
      return key.escape || ch === 'n' || ch === 'N' ? { actions: [{ type: 'close' }] } : NOTHING;
    case 'cancelJob':
      if (ch === 'y' || ch === 'Y') return { actions: [{ type: 'close' }], effect: { kind: 'cancelJob' } };
      return key.escape || ch === 'n' || ch === 'N' ? { actions: [{ type: 'close' }] } : NOTHING;
    case 'lanes':
      return routePicker(input, key, ui, ctx);
    case 'confirmLane': {
      const lane = ui.picker.chosen;
      if ((ch === 'y' || ch === 'Y') && lane) {
        return { actions: [{ type: 'close' }], effect: { kind: 'switchLane', lane } };
      }
      if (ch === 'n' || ch === 'N') return { actions: [{ type: 'confirmBack' }] };
      return key.escape ? { actions: [{ type: 'close' }] } : NOTHING;
    }
  }
}
