/**
 * The one terminal start-up path: every command that opens a view (`run`, `demo`, `attach`, the
 * notebook) loads the injected UI here and hands it what to show; panels/screen.tsx then owns the
 * terminal, the frame writer and the hand-over to a run's own terminal for both views.
 */
import type { NotebookController } from '../notebook/controller.js';
import { type HeadlessOutcome, runHeadless } from '../session/headless.js';
import type { Session } from '../session/session.js';
import type { CliDeps } from './deps.js';

/** the dashboard of one run: the session starts (or picks up) its run, then the view takes over */
export async function showDashboard(deps: CliDeps, session: Session): Promise<void> {
  const tui = await deps.loadTui();
  await session.start();
  await tui.runTui({ dashboard: session });
}

/** the notebook, whose cells' dashboards are drawn inside the same view */
export async function showNotebook(deps: CliDeps, controller: NotebookController): Promise<void> {
  const tui = await deps.loadTui();
  await tui.runTui({ notebook: controller });
}

/** `--headless`: no view; the run to its verdict, printed (`json`: the whole result), then its exit status */
export async function showHeadless(
  session: Session,
  json: boolean | undefined,
  line: (r: HeadlessOutcome['result']) => string,
): Promise<never> {
  const out = await runHeadless(session);
  process.stdout.write(json ? `${JSON.stringify(out.result)}\n` : `${line(out.result)}\n`);
  process.exit(out.exitCode);
}
