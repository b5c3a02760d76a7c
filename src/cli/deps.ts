import type { NotebookController } from '../notebook/controller.js';
import type { SessionController } from '../session/state.js';

/** what the terminal shows: one run's dashboard, or the notebook (with each cell's dashboard in it) */
export type TuiView = { dashboard: SessionController } | { notebook: NotebookController };

/**
 * The UI is injected by bin/nsa-dbg, so nothing under src/ imports React or Ink: the engine and the
 * headless commands run without loading them at all.
 */
export interface TuiModule {
  /** the one way the terminal is taken over, for the dashboard and the notebook alike */
  runTui(view: TuiView, options?: TuiOptions): Promise<void>;
}

/** How the dashboard draws, from the global options. */
export interface TuiOptions {
  /** ASCII-only glyphs; undefined: decided by the locale */
  ascii?: boolean;
}

export interface CliDeps {
  loadTui: () => Promise<TuiModule>;
}
