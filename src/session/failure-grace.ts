/**
 * A run across nodes (its launch kind `spansNodes`: `--slurm`, `--hosts`) whose worker has failed
 * is over, but it may not end by itself: torchrun stops the failed node's workers, then waits up to 5 min at its exit barrier for
 * the other agents, and a peer that never joined the collective (its rank failed before
 * init_process_group) leaves the other nodes' ranks waiting in it for up to 30 min, which is no
 * evidence of anything. A crash in a collective ends every node within seconds (gloo and NCCL see the
 * closed connection), so the rest of the run gets this long to end on its own, then is stopped.
 */
const WORKER_FAILURE_GRACE_MS = 15_000;

export class FailureGrace {
  private timer: NodeJS.Timeout | null = null;

  get seconds(): number {
    return WORKER_FAILURE_GRACE_MS / 1000;
  }

  get armed(): boolean {
    return this.timer !== null;
  }

  /** start the grace (once): `then` runs when it is over */
  arm(then: () => void): void {
    if (this.timer) return;
    this.timer = setTimeout(then, WORKER_FAILURE_GRACE_MS);
    this.timer.unref?.();
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
