/**
 * The notebook's prompt line about quitting: first what quitting ends (asked, y/N), then, once
 * asked, the running cell's stop countdown with `q again: kill now`, as the plain dashboard shows
 * it. The view stays up (raw mode on) until the cell has stopped and its verdict is written: it
 * once gave the terminal back first, leaving a blank screen for the ladder's ~15 s and `q` echoed.
 */
import type { NotebookViewState } from '../../src/notebook/controller-types.js';

/** what quitting now ends: the running cell is stopped (its verdict kept), the queue dropped */
export function quitPrompt(state: NotebookViewState): string {
  const parts: string[] = [];
  if (state.running) parts.push(`stop ${state.running} (its verdict is kept)`);
  const n = state.queued.length;
  if (n) parts.push(`drop ${n} queued cell${n === 1 ? '' : 's'}`);
  return `${parts.join(' and ')} and quit? y/N`;
}

/** while quitting: the countdown once the ladder has begun, before that what is being stopped */
export function quittingLine(state: NotebookViewState): string {
  if (state.stopping) return state.stopping;
  return state.running ? `stopping ${state.running} (its verdict is kept)…` : 'closing the notebook…';
}
