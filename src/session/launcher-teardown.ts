/**
 * A hang confirmed while the run's launcher is already tearing it down is not nsa-dbg's to end.
 * When a rank crashes, its peers wait in the collective it never joins: silent, idle, exactly what
 * a hang looks like, and the detector confirms it within seconds. torchrun only notices the dead
 * worker at its next monitor look (every 5 s in torch 1.x), after the crashed process has finished
 * exiting (a logger flushing at exit, a forked child, a loaded box: seconds more), and then stops
 * the rest with SIGTERM. Stopping the run ourselves in that window would replace the launcher's
 * teardown with ours: the ranks' last words would say SIGINT from nsa-dbg instead of where they were
 * when their launcher ended them. So once a sign of teardown has been seen (a traceback, a rank's
 * exit, torchrun's own lines; teardown-signs.ts), the stop that follows a confirmed hang waits for
 * the run to end on its own, up to this long after the sign, then comes as before.
 */
export const LAUNCHER_TEARDOWN_GRACE_MS = 20_000;

export interface LauncherTeardownWait {
  /** the first sign of teardown and when it was seen, read anew each time (it may come late) */
  sign: () => { what: string; atMs: number } | null;
  /** the run has ended */
  exited: () => boolean;
  nowMs: () => number;
  sleep: (ms: number) => Promise<void>;
}

/** how often the end is looked for */
const POLL_MS = 250;

/**
 * Resolves when the stop of a confirmed hang may come: at once when no teardown is under way (or
 * its grace is over), else when the run has ended or the grace runs out. Says which.
 */
export async function launcherTeardownDone(
  o: LauncherTeardownWait,
): Promise<'no teardown' | 'ended' | 'grace over'> {
  let waited = false;
  for (;;) {
    if (o.exited()) return 'ended';
    const sign = o.sign();
    const left = sign === null ? 0 : sign.atMs + LAUNCHER_TEARDOWN_GRACE_MS - o.nowMs();
    if (left <= 0) return waited ? 'grace over' : 'no teardown';
    waited = true;
    await o.sleep(Math.min(left, POLL_MS));
  }
}
