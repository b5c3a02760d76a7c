/**
 * The dashboard's UI state machine: which overlay is open, where the log is scrolled, and the lane
 * picker's filter/selection. Pure (no React, no Ink) so every transition is unit-tested on its own;
 * the App feeds it actions and runs the side effects (dump, lane switch, quit) itself.
 */
import type { LaneSummary } from './state.js';

export type Overlay = 'none' | 'help' | 'lanes' | 'confirmLane' | 'quit' | 'cancelJob';

export interface UiState {
  overlay: Overlay;
  /** lines scrolled up from the newest one (0 = bottom) */
  logScroll: number;
  /** stick to the newest line as output arrives */
  follow: boolean;
  picker: { filter: string; index: number; chosen?: string };
}

export type UiAction =
  | { type: 'toggleHelp' }
  | { type: 'openLanes' }
  | { type: 'openQuit' }
  /** `K`: the scancel prompt of a Slurm run */
  | { type: 'openCancelJob' }
  /** Esc: close whatever is open */
  | { type: 'close' }
  /** scroll the log by `delta` lines (positive = older); `maxScroll` comes from the visible height */
  | { type: 'scroll'; delta: number; maxScroll: number }
  | { type: 'follow' }
  /** new output arrived: keep a scrolled-up view where it was */
  | { type: 'logGrew'; added: number; maxScroll: number }
  /** the log was replaced (new run): back to the bottom */
  | { type: 'logReset' }
  | { type: 'pickerType'; text: string }
  | { type: 'pickerBackspace' }
  /** `count` is the number of lanes the filter leaves, to clamp the selection */
  | { type: 'pickerMove'; delta: number; count: number }
  | { type: 'pickerChoose'; lane: string }
  /** `n` in the confirm step: back to the list with the filter kept */
  | { type: 'confirmBack' };

export const initialUiState: UiState = {
  overlay: 'none',
  logScroll: 0,
  follow: true,
  picker: { filter: '', index: 0 },
};

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

function scrolledTo(state: UiState, logScroll: number): UiState {
  return { ...state, logScroll, follow: logScroll === 0 };
}

export function uiReducer(state: UiState, action: UiAction): UiState {
  switch (action.type) {
    case 'toggleHelp':
      return { ...state, overlay: state.overlay === 'help' ? 'none' : 'help' };
    case 'openLanes':
      return { ...state, overlay: 'lanes', picker: { filter: '', index: 0 } };
    case 'openQuit':
      return { ...state, overlay: 'quit' };
    case 'openCancelJob':
      return { ...state, overlay: 'cancelJob' };
    case 'close':
      return { ...state, overlay: 'none', picker: { filter: '', index: 0 } };
    case 'scroll':
      return scrolledTo(state, clamp(state.logScroll + action.delta, 0, Math.max(0, action.maxScroll)));
    case 'follow':
      return scrolledTo(state, 0);
    case 'logGrew':
      if (state.follow || action.added <= 0) return state;
      return scrolledTo(state, clamp(state.logScroll + action.added, 0, Math.max(0, action.maxScroll)));
    case 'logReset':
      return scrolledTo(state, 0);
    case 'pickerType':
      return { ...state, picker: { filter: state.picker.filter + action.text, index: 0 } };
    case 'pickerBackspace':
      return { ...state, picker: { filter: state.picker.filter.slice(0, -1), index: 0 } };
    case 'pickerMove': {
      const index = action.count > 0 ? clamp(state.picker.index + action.delta, 0, action.count - 1) : 0;
      return { ...state, picker: { ...state.picker, index } };
    }
    case 'pickerChoose':
      return { ...state, overlay: 'confirmLane', picker: { ...state.picker, chosen: action.lane } };
    case 'confirmBack':
      return {
        ...state,
        overlay: 'lanes',
        picker: { filter: state.picker.filter, index: state.picker.index },
      };
  }
}

/**
 * Lanes matching the picker filter (case-insensitive): name matches first, then lanes whose
 * description mentions it, so typing "batch" puts `batched-prefill` on top even when another
 * lane's description talks about batching.
 */
export function filterLanes(lanes: readonly LaneSummary[], filter: string): LaneSummary[] {
  const f = filter.trim().toLowerCase();
  if (f === '') return [...lanes];
  const byName = lanes.filter((l) => l.name.toLowerCase().includes(f));
  const byDescription = lanes.filter(
    (l) => !l.name.toLowerCase().includes(f) && l.description.toLowerCase().includes(f),
  );
  return [...byName, ...byDescription];
}
