/** The notebook controller's contracts: what the CLI injects, what the TUI reads, what a start asks. */

import type { Lane } from '../lanes/lane.js';
import type { CheckRun } from '../preflight/format.js';
import type { RunSpec } from '../runs/launcher.js';
import type { SessionController } from '../session/state.js';
import type { Outcome } from './cell-build.js';
import type { NotebookController } from './controller.js';
import type { Cell, Notebook } from './model.js';
import type { Intended } from './run-proof.js';
import type { Queued } from './run-queue.js';
import type { NotebookStore } from './store.js';

export interface CellSession extends SessionController {
  start(): Promise<void>;
  currentRun(): { spec: RunSpec; exited: boolean } | null;
  /** stop the run by its lane's policy, as a user's stop (the notebook closing: its verdict is kept) */
  stopByUser?(): Promise<void>;
  /** each rank's process as it started (env, argv from /proc on its box): the run's proof */
  processStarts?(): Promise<Array<{ rank: number; env: Record<string, string>; argv: string[] }>>;
  /** stop its timers and followers (the controller calls it once no dashboard shows the cell) */
  dispose?(): Promise<void>;
}

export interface OpenCellOptions {
  lane: string;
  lanes: Map<string, Lane>;
  /** the notebook's evidence folder: each cell's folder on this machine goes in it */
  evidenceRoot: string;
  steps?: number;
  /** pick up a cell's run that is still going, on its target, instead of starting the lane */
  attachRunDir?: string;
}

export interface NotebookDeps {
  lanes: () => Map<string, Lane>;
  /** a session for a new cell on the notebook's target, or for a running cell picked up there */
  openSession(o: OpenCellOptions): CellSession;
  /** the dashboard of a finished cell: its folder on this machine read to its end, nothing live */
  openFinished(o: { lane: string; lanes: Map<string, Lane>; dir: string }): CellSession;
  /**
   * start the session and run it to a verdict, taking evidence and stopping on a stall; the
   * session is left open (the controller disposes it once no dashboard shows it)
   */
  runToVerdict(session: CellSession): Promise<Outcome & { localDir: string }>;
  /** where new cells run, as a cell records it (`local`, `user@host`, `slurm:local`, `node-a,node-b`) */
  target: string;
  /** what else of the target decides how a run goes (a Slurm job's nodes), for trial keys */
  launchKey?: Record<string, unknown>;
  /** steps for new cells (a phase's own steps win) */
  steps?: number;
  /** the command a new cell of `lane` would run and where (shown before it starts) */
  commandFor?(lane: Lane, steps?: number): { argv: string[]; cwd: string };
  /** the box check of `lane` on the notebook's target (`nsa-dbg check`), for check cells */
  checkBox?(lane: Lane): Promise<CheckRun>;
  /** new cells run the bundled demo (a check cell records it) */
  demo?: boolean;
  /** the clock check cells are stamped with */
  now?: () => Date;
  /**
   * the report (Markdown + SVG) of the notebook in `notebookFile`; returns the Markdown file.
   * report/ and bisect/ sit above the notebook (they read its records), so their entry points are
   * handed down here instead of imported.
   */
  writeReport(notebookFile: string): string;
  /** `:bisect` of cells `a` and `b`, run as the controller's task; false when it could not start */
  bisectCells(
    controller: Pick<NotebookController, 'start' | 'idle' | 'getState' | 'setNotice' | 'runTask'>,
    store: NotebookStore,
    o: { lanes: Map<string, Lane>; target: string; launchKey?: Record<string, unknown>; steps?: number },
    a: string,
    b: string,
  ): boolean;
}

export interface NotebookViewState {
  file: string;
  notebook: Notebook;
  /** cells whose lane file changed since they ran */
  stale: string[];
  /** the cell whose run (or box check) is in progress */
  running: string | null;
  /**
   * where new cells run, and whether the notebook has a cell there yet: a box it has not seen is
   * offered a box check before its first cell
   */
  box: { target: string; seen: boolean };
  /** the running cell's status line: step, loss, toks/s, SUSPECT/HANG */
  live: string | null;
  /** the running cell's stop countdown while it is being stopped (quitting waits for it) */
  stopping?: string | null;
  /** cells asked for while another runs, in the order they will run */
  queued: QueuedView[];
  notice: string | null;
}

/** a queued cell as the view shows it: its id, lane and what makes it differ */
export type QueuedView = Omit<Queued<unknown>, 'req'>;

/** `parent`, `link`, `phase`, `bisect`: where the new cell comes from, as it will record it */
export interface StartRequest extends Pick<Cell, 'parent' | 'link' | 'phase' | 'bisect'> {
  lane: string;
  /** the full env to run with (default: the lane's) */
  env?: Record<string, string>;
  /** a bisection's trial: the lane's args, demo env and detector settings replaced */
  trial?: Partial<Pick<Lane, 'args' | 'demoEnv' | 'detector'>>;
  /** what the run's processes must see (default: its env); a bisection adds the names it unsets */
  expect?: Intended;
}
