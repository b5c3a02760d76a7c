/**
 * A box check run from the notebook: its cell is written when it starts and patched with the
 * verdict when it ends. It holds the controller's task slot, so no run starts on the GPUs it
 * measures (a cell asked for meanwhile is queued), and closing the notebook ends it with the cell
 * marked as stopped.
 */

import { type Lane, LaneError } from '../lanes/lane.js';
import { getLane } from '../lanes/load.js';
import { laneSnapshot } from './cell-build.js';
import { checkedPatch, checkFailedPatch, checkLine, newCheckCell } from './check-cell.js';
import type { NotebookDeps } from './controller-types.js';
import type { Cell } from './model.js';
import { type NotebookAction, nextCellId } from './reducer.js';
import type { NotebookStore } from './store.js';

export interface CheckTaskHost {
  store: Pick<NotebookStore, 'get'>;
  /** write an action; the error text, or null once written */
  save(action: NotebookAction): string | null;
  setNotice(text: string): void;
  runTask(name: string, fn: (signal: AbortSignal) => Promise<unknown>): boolean;
  /** the check cell in progress, for the view (null when it has ended) */
  checking(id: string | null): void;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * The box check of `lane` on the deps' target (`parent`: the check cell it re-runs); returns its
 * cell id, or null when it could not start (no check here, an unknown lane, the slot taken: said in
 * the notice).
 */
export function startCheck(
  host: CheckTaskHost,
  deps: Pick<NotebookDeps, 'checkBox' | 'lanes' | 'target' | 'demo' | 'now'>,
  laneName: string,
  parent?: string,
): string | null {
  const run = deps.checkBox?.bind(deps);
  if (!run) {
    host.setNotice('the box cannot be checked from here');
    return null;
  }
  let lane: Lane;
  try {
    lane = getLane(deps.lanes(), laneName);
  } catch (e) {
    host.setNotice(e instanceof LaneError ? e.message : `unknown lane "${laneName}"`);
    return null;
  }
  const now = deps.now ?? (() => new Date());
  const { target } = deps;
  const id = nextCellId(host.store.get());
  // refused while a run or a bisection holds the GPUs: "c3 is running: check the box when it has ended"
  const started = host.runTask('check the box', async (signal) => {
    const cell = newCheckCell({
      lane: laneSnapshot(lane),
      target,
      demo: !!deps.demo,
      now: now(),
      ...(parent ? { parent } : {}),
    });
    if (host.save({ type: 'addCell', cell }) !== null) return;
    host.checking(id);
    host.setNotice(`${id} checking ${target} for lane ${lane.name}…`);
    const closed = new Promise<null>((res) =>
      signal.addEventListener('abort', () => res(null), { once: true }),
    );
    try {
      const out = await Promise.race([run(lane), closed]);
      const patch = out
        ? checkedPatch(out, now())
        : checkFailedPatch('stopped before its verdict: the notebook was closed', now());
      host.save({ type: 'updateCell', id, patch });
      const done = host.store.get().cells.find((c: Cell) => c.id === id);
      if (out && done) host.setNotice(`${id} ${out.verdict}: ${checkLine(done)}`);
    } catch (e) {
      host.save({
        type: 'updateCell',
        id,
        patch: checkFailedPatch(`the check could not run: ${message(e)}`, now()),
      });
      host.setNotice(`${id} box check failed: ${message(e)}`);
    } finally {
      host.checking(null);
    }
  });
  return started ? id : null;
}
