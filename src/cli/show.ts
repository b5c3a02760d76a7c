/**
 * The one terminal start-up path: every command that opens a view (`run`, `demo`, `attach`, the
 * notebook) loads the injected UI here and hands it what to show; panels/screen.tsx then owns the
 * terminal, the frame writer and the hand-over to a run's own terminal for both views. Without a
 * terminal on both stdin and stdout there is no view to show: that is said here, once, before
 * the session starts its run (a dashboard that dies after the launch leaves the run `lost`).
 */

import type { NotebookController } from '../notebook/controller.js';
import { type HeadlessOutcome, runHeadless } from '../session/headless.js';
import type { Session } from '../session/session.js';
import type { CliDeps, TuiModule } from './deps.js';
import { exitAfter } from './exit-after.js';

/** the line said, and its exit status, when stdin or stdout is not a terminal */
export const NO_TERMINAL = 'the dashboard needs a terminal; use --headless';
export const NO_TERMINAL_EXIT = 2;

/** a terminal on both ends (a script, CI, `ssh host nsa-dbg …` without -t have none), else null */
async function takeTerminal(deps: CliDeps, hint = ''): Promise<TuiModule | null> {
  if (process.stdin.isTTY && process.stdout.isTTY) return deps.loadTui();
  process.stderr.write(`nsa-dbg: ${NO_TERMINAL}${hint}\n`);
  process.exitCode = NO_TERMINAL_EXIT;
  return null;
}

/** the dashboard of one run: the session starts (or picks up) its run, then the view takes over */
export async function showDashboard(deps: CliDeps, session: Session): Promise<void> {
  const tui = await takeTerminal(deps);
  // an SSH connection made to open the session must not keep the process alive
  if (!tui) process.exit(NO_TERMINAL_EXIT);
  await session.start();
  await tui.runTui({ dashboard: session });
}

/**
 * the notebook, whose cells' dashboards are drawn inside the same view; `open` takes its lock and
 * reads it, so a refused terminal leaves no notebook file or lock behind
 */
export async function showNotebook(deps: CliDeps, open: () => Promise<NotebookController>): Promise<void> {
  const tui = await takeTerminal(deps, ' (a notebook without one: nsa-dbg run --headless --notebook FILE …)');
  if (!tui) return;
  await tui.runTui({ notebook: await open() });
}

/** `--headless`: no view; the run to its verdict, printed (`json`: the whole result), then its exit status */
export async function showHeadless(
  session: Session,
  json: boolean | undefined,
  line: (r: HeadlessOutcome['result']) => string,
): Promise<never> {
  const out = await runHeadless(session);
  return exitAfter(json ? `${JSON.stringify(out.result)}\n` : `${line(out.result)}\n`, out.exitCode);
}
