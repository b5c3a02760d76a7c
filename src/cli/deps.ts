import type { SessionController } from '../session/state.js';

/**
 * The UI is injected by bin/nsa-dbg, so nothing under src/ imports React or Ink: the engine and the
 * headless commands run without loading them at all.
 */
export interface TuiModule {
  runTui(controller: SessionController): Promise<void>;
}

export interface CliDeps {
  loadTui: () => Promise<TuiModule>;
}
