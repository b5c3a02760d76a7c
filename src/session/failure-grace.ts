/**
 * The grace a run across nodes gets after a worker (or an agent) failed: its launch kind's
 * `acrossNodes` (`--slurm`, `--hosts`; why it is needed: WORKER_FAILURE_GRACE_MS in
 * src/runs/launch-kind.ts). Armed once, said on the status line; when it is over and the run has
 * not ended on its own, the rest is stopped. A kind without the capability gets no grace: one box's
 * run ends with its trainer.
 */
import type { RunController } from '../runs/run-controller.js';
import { debugLog } from '../util/debug-log.js';

export class FailureGrace {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly notice: (text: string) => void,
    /** stop what is left of the run (a stop already under way is not asked again) */
    private readonly stopRest: () => void,
    private readonly stopping: () => boolean,
  ) {}

  /** whether a worker failure of `run` would arm a grace now */
  watching(run: RunController | null): run is RunController {
    return run !== null && run.kind.acrossNodes !== undefined && this.timer === null && !run.exited;
  }

  /** `what` failed in `run`: the rest get the kind's grace to end, then are stopped */
  workerFailed(run: RunController | null, what: string): void {
    if (!this.watching(run)) return;
    const ms = run.kind.acrossNodes!.failureGraceMs;
    this.notice(`${what}; the rest of the run is stopped if it has not ended in ${ms / 1000} s`);
    this.timer = setTimeout(() => {
      if (run.exited || this.stopping()) return;
      debugLog(`run ${run.spec.runId}: ${what} ${ms / 1000} s ago; stopping the rest`);
      this.stopRest();
    }, ms);
    this.timer.unref?.();
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
