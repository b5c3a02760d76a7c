import { type Instance, render } from 'ink';
import type { TuiOptions } from '../../src/cli/deps.js';
import type { NotebookController } from '../../src/notebook/controller.js';
import { resolveAscii } from '../ascii.js';
import { TerminalGuard } from '../terminal.js';
import { NotebookApp } from './NotebookApp.js';

const SIGNAL_EXIT: Record<string, number> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

/**
 * The notebook's entry, on the alternate screen like the dashboard. Every way out (q, a signal,
 * an error) gives the terminal back first, then closes the notebook: a running cell is stopped and
 * its verdict written before the lock is released, so nothing is left half-done.
 */
export async function runNotebookTui(
  controller: NotebookController,
  options: TuiOptions = {},
): Promise<void> {
  const ascii = resolveAscii(options.ascii);
  const terminal = new TerminalGuard();
  let ink: Instance | null = null;
  const giveBack = () => {
    const current = ink;
    ink = null;
    current?.unmount();
    terminal.restore();
  };
  let closing = false;
  const leave = (code: number, message?: string) => {
    if (closing) process.exit(code);
    closing = true;
    giveBack();
    if (message) process.stderr.write(message);
    const exit = () => process.exit(code);
    controller.close().then(exit, exit);
  };
  process.on('uncaughtException', (e) => leave(1, `nsa-dbg: ${e.stack ?? e.message}\n`));
  for (const signal of Object.keys(SIGNAL_EXIT) as NodeJS.Signals[])
    process.on(signal, () => leave(SIGNAL_EXIT[signal] ?? 1));
  terminal.enter();
  let finish: () => void = () => {};
  const done = new Promise<void>((r) => {
    finish = r;
  });
  ink = render(<NotebookApp controller={controller} ascii={ascii} onExit={() => finish()} />, {
    exitOnCtrlC: false,
    patchConsole: false,
    maxFps: 20,
  });
  // a render error ends Ink with a rejected exit promise and `done` never comes: that is a failure
  // (exit 1, the error on the main screen), and the notebook is still closed and its lock released
  const failed = await Promise.race([
    done.then(() => null),
    ink.waitUntilExit().then(
      () => null,
      (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
    ),
  ]);
  if (failed) leave(1, `nsa-dbg: ${failed.stack ?? failed.message}\n`);
  else leave(0);
  return new Promise<void>(() => {});
}
