/** `:bisect` in the notebook: two marked cells → a bisection run as the controller's task. */

import type { NotebookDeps } from '../notebook/controller-types.js';
import { planFromCells } from './plan.js';
import { controllerPort } from './port.js';
import { runBisection } from './runner.js';

export const bisectCells: NotebookDeps['bisectCells'] = (controller, store, o, a, b) => {
  const cells = store.get().cells;
  const ca = cells.find((c) => c.id === a);
  const cb = cells.find((c) => c.id === b);
  if (!ca || !cb || a === b) {
    controller.setNotice('mark a GO cell and a NO-GO cell with m, then :bisect');
    return false;
  }
  const planned = planFromCells(o.lanes, ca, cb, o);
  if ('error' in planned) {
    controller.setNotice(planned.error);
    return false;
  }
  const port = controllerPort(controller, store, planned.lane, planned.trial);
  return controller.runTask('bisect', async (signal) => {
    const onProgress = (line: string) => controller.setNotice(`bisect: ${line}`);
    const r = await runBisection(port, { ...planned.plan, signal, onProgress });
    controller.setNotice(`bisect ${r.id}: ${r.result?.conclusion ?? r.error ?? r.state}`);
  });
};
