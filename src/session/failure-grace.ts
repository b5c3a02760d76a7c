/**
 * The grace a run across nodes gets after a worker failed (its launch kind's `acrossNodes`:
 * `--slurm`, `--hosts`; why it is needed: WORKER_FAILURE_GRACE_MS in src/runs/launch-kind.ts):
 * armed once, then the rest of the run is stopped.
 */
export class FailureGrace {
  private timer: NodeJS.Timeout | null = null;

  get armed(): boolean {
    return this.timer !== null;
  }

  /** start the grace (once): `then` runs when `ms` are over */
  arm(ms: number, then: () => void): void {
    if (this.timer) return;
    this.timer = setTimeout(then, ms);
    this.timer.unref?.();
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
