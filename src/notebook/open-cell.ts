/**
 * A notebook cell's dashboard: the live session for the running cell (kept open past its run's end
 * for as long as it is shown), else its run folder read to its end, or a run left running by an
 * nsa-dbg that is gone followed live again on its own target. Leaving the dashboard never stops
 * the run; the lane cannot be switched from inside a cell.
 */
import { dirname } from 'node:path';
import type { SessionController } from '../session/state.js';
import { resolveEvidenceDir } from './cell-build.js';
import type { CellRun } from './cell-run.js';
import { asCellView } from './cell-view.js';
import type { CellSession, NotebookDeps } from './controller-types.js';
import type { Cell } from './model.js';
import type { NotebookStore } from './store.js';

/** what the controller holds that a cell's dashboard needs */
export interface OpenCellContext {
  /** the run in progress */
  active: CellRun | null;
  /** runs that ended but whose session a dashboard still shows */
  shown: Set<CellRun>;
  store: NotebookStore;
  deps: NotebookDeps;
}

export async function openCellView(c: Cell, ctx: OpenCellContext): Promise<SessionController> {
  if (c.kind === 'check') throw new Error(`${c.id} is a box check: its checks are shown below the list`);
  const { active: live, shown, store, deps } = ctx;
  if (live?.id === c.id) {
    shown.add(live);
    const close = live.openView();
    return asCellView(live.session, null, () => {
      close();
      shown.delete(live);
    });
  }
  const lanes = deps.lanes();
  let session: CellSession;
  if (c.state !== 'running') {
    // its folder here holds the whole run: read to its end, nothing on its target asked
    const dir = resolveEvidenceDir(dirname(store.file), c);
    session = deps.openFinished({ lane: c.lane.name, lanes, dir });
  } else if (c.target === deps.target) {
    session = deps.openSession({
      lane: c.lane.name,
      lanes,
      evidenceRoot: store.evidenceDir,
      attachRunDir: c.runDir,
    });
  } else {
    throw new Error(`it runs on ${c.target}: open the notebook with that target to follow it`);
  }
  await session.start();
  return asCellView(session, session);
}
