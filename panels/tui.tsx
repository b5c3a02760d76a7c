import type { TuiOptions } from '../src/cli/deps.js';
import type { SessionController } from '../src/session/state.js';
import { App } from './App.js';
import { resolveAscii } from './ascii.js';
import { runScreen } from './screen.js';

/**
 * The dashboard's entry: the App for an engine controller until the user quits (panels/screen.tsx
 * owns the terminal, the frames and the hand-over to the run's own terminal).
 * - `q`: the App has the controller stop or leave the run, then exit 0;
 * - a signal: the terminal first, then the same quit as `q`, exit 128 + signal;
 * - an error: the terminal first, then the error, exit 1 (the local trainer gets SIGHUP when its
 *   PTY closes).
 */
export async function runTui(controller: SessionController, options: TuiOptions = {}): Promise<void> {
  const ascii = resolveAscii(options.ascii);
  await runScreen<never>({
    view: (round) => (
      <App
        controller={controller}
        ascii={ascii}
        initialNotice={round.notice}
        onExit={() => round.end({ kind: 'quit' })}
        onTerminal={() => round.end({ kind: 'terminal', session: controller })}
      />
    ),
    onQuit: async () => {},
    onSignal: () => controller.quit(),
    onFatal: async () => {},
  });
}

export { runNotebookTui } from './notebook/run.js';
