import type { NotebookController } from '../notebook/controller.js';
import type { SessionController } from '../session/state.js';

/**
 * The UI is injected by bin/nsa-dbg, so nothing under src/ imports React or Ink: the engine and the
 * headless commands run without loading them at all.
 */
export interface TuiModule {
  runTui(controller: SessionController, options?: TuiOptions): Promise<void>;
  /** the notebook view (cells, A/B toggles, compare, report), with cell dashboards inside it */
  runNotebookTui?(controller: NotebookController, options?: TuiOptions): Promise<void>;
}

/** How the dashboard draws, from the global options. */
export interface TuiOptions {
  /** ASCII-only glyphs; undefined: decided by the locale */
  ascii?: boolean;
}

export interface CliDeps {
  loadTui: () => Promise<TuiModule>;
}
