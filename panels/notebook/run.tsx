import type { TuiOptions } from '../../src/cli/deps.js';
import type { NotebookController } from '../../src/notebook/controller.js';
import { resolveAscii } from '../ascii.js';
import { runScreen } from '../screen.js';
import { NotebookApp, type NotebookResume } from './NotebookApp.js';

/**
 * The notebook's entry, drawn the way the dashboard is (panels/screen.tsx), so a cell's dashboard
 * inside it is the plain one, `t` included: the terminal goes to the cell's run and comes back to
 * the same cell. Every way out (q, a signal, an error) gives the terminal back first, then closes
 * the notebook: a running cell is stopped and its verdict written before the lock is released.
 */
export async function runNotebookTui(
  controller: NotebookController,
  options: TuiOptions = {},
): Promise<void> {
  const ascii = resolveAscii(options.ascii);
  const close = () => controller.close();
  await runScreen<NotebookResume>({
    view: (round) => (
      <NotebookApp
        controller={controller}
        ascii={ascii}
        resume={round.resume}
        initialNotice={round.notice}
        onExit={() => round.end({ kind: 'quit' })}
        onTerminal={(resume) => round.end({ kind: 'terminal', session: resume.cellView, resume })}
      />
    ),
    onQuit: close,
    onSignal: close,
    onFatal: close,
  });
}
