/**
 * The bisection's trials run through the notebook controller, like any other cell: one run at a
 * time, to a verdict exactly as `run --headless` gets it (a confirmed hang stopped at once), the
 * cell written as it goes. The TUI and `nsa-dbg bisect` share this.
 */
import type { NotebookController } from '../notebook/controller.js';
import type { StartRequest } from '../notebook/controller-types.js';
import type { NotebookStore } from '../notebook/store.js';
import type { BisectPort } from './runner.js';

export function controllerPort(
  controller: Pick<NotebookController, 'start' | 'idle' | 'getState'>,
  store: NotebookStore,
  /** the lane trials are run from, and what of it a trial replaces besides env and args */
  lane: string,
  trial: NonNullable<StartRequest['trial']>,
): BisectPort {
  return {
    notebook: () => store.get(),
    dispatch: (a) => store.dispatch(a),
    runCell: async ({ side, tag, parent, expect }) => {
      const id = controller.start({
        lane,
        env: side.env,
        trial: { ...trial, args: side.args },
        bisect: tag,
        ...(expect ? { expect } : {}),
        ...(parent ? { parent, link: 'bisect' as const } : {}),
      });
      if (!id) throw new Error(controller.getState().notice ?? 'the trial did not start');
      await controller.idle();
      const cell = store.get().cells.find((c) => c.id === id);
      if (cell?.state !== 'done')
        throw new Error(
          `trial ${id} did not finish: ${controller.getState().notice ?? cell?.state ?? 'no cell'}`,
        );
      return cell;
    },
  };
}
