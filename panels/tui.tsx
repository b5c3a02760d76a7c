import type { TuiOptions, TuiView } from '../src/cli/deps.js';
import { App } from './App.js';
import { resolveAscii } from './ascii.js';
import { NotebookApp, type NotebookResume } from './notebook/NotebookApp.js';
import { runScreen } from './screen.js';

/**
 * The one entry of the terminal UI, for the dashboard and the notebook alike: panels/screen.tsx owns
 * the terminal, the frames (the frame writer) and the hand-over to a run's own terminal (`t`), and
 * gives the terminal back the same way however it ends.
 *
 * The dashboard: the App until the user quits. `q` has the controller stop or leave the run, then
 * exit 0; a signal gives the terminal back first, then quits the same way, exit 128 + signal; an
 * error gives it back, then the error, exit 1.
 *
 * The notebook: a cell's dashboard inside it is the plain App, `t` included (the terminal goes to
 * the cell's run and comes back to the same cell). Every way out closes the notebook after the
 * terminal is back: a running cell is stopped and its verdict written before the lock is released.
 */
export async function runTui(view: TuiView, options: TuiOptions = {}): Promise<void> {
  const ascii = resolveAscii(options.ascii);
  if ('dashboard' in view) {
    const controller = view.dashboard;
    await runScreen<never>({
      view: (round) => (
        <App
          controller={controller}
          ascii={ascii}
          initialNotice={round.notice}
          onExit={() => round.end({ kind: 'quit' })}
          onSuspend={round.suspend}
          onTerminal={() => round.end({ kind: 'terminal', session: controller })}
        />
      ),
      onQuit: async () => {},
      onSignal: () => controller.quit(),
      onFatal: async () => {},
    });
    return;
  }
  const controller = view.notebook;
  const close = () => controller.close();
  await runScreen<NotebookResume>({
    view: (round) => (
      <NotebookApp
        controller={controller}
        ascii={ascii}
        resume={round.resume}
        initialNotice={round.notice}
        onExit={() => round.end({ kind: 'quit' })}
        onSuspend={round.suspend}
        onTerminal={(resume) => round.end({ kind: 'terminal', session: resume.cellView, resume })}
      />
    ),
    onQuit: close,
    onSignal: close,
    onFatal: close,
  });
}
