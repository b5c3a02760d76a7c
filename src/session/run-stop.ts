/**
 * Stopping one run by its lane's ladder (.HALT, SIGINT, SIGKILL: runs/stop.ts), with the ladder's
 * progress kept for the status line ("SIGINT sent 3 s ago; SIGKILL in 7 s") and whether the stop
 * was the user's (the verdict is then `stopped`) or nsa-dbg's after a confirmed hang (it stays
 * `hang`).
 */
import type { StopPolicy } from '../lanes/lane.js';
import type { RunController } from '../runs/run-controller.js';
import { debugLog } from '../util/debug-log.js';
import { type StopLadder, stopText } from './stop-ladder.js';

export class RunStop {
  /** the ladder in progress */
  ladder: StopLadder | null = null;
  /** the verdict is `stopped`: a user's stop, a cancelled job */
  byUser = false;

  constructor(private readonly notice: (text: string) => void) {}

  /**
   * `stalled`: a hung step never polls .HALT, so the ladder starts at SIGINT. Resolves once the run
   * has exited and its controller is disposed.
   */
  async stop(
    run: RunController,
    policy: StopPolicy,
    o: { byUser: boolean; stalled: boolean },
  ): Promise<void> {
    this.byUser = o.byUser;
    debugLog(`run ${run.spec.runId}: stopping (stalled=${o.stalled}, byUser=${o.byUser})`);
    const how = await run.stop(policy, {
      stalled: o.stalled,
      onStep: (s) => {
        debugLog(`run ${run.spec.runId}: stop step ${s}`);
        const nextInS = s === 'halt' ? policy.haltWaitS : s === 'sigint' ? policy.sigintWaitS : null;
        this.ladder = { step: s, atMs: Date.now(), nextInS };
        this.notice(stopText(this.ladder, Date.now()));
      },
    });
    this.ladder = null;
    debugLog(`run ${run.spec.runId}: stop ended by ${how}`);
    await run.waitForExit();
    debugLog(`run ${run.spec.runId}: exit seen`);
    await run.dispose();
  }

  /** a second `q` while the ladder runs: SIGKILL the trainer's whole tree now */
  async killNow(run: RunController): Promise<void> {
    this.ladder = { step: 'sigkill', atMs: Date.now(), nextInS: null };
    this.notice(stopText(this.ladder, Date.now()));
    await run.kill();
  }

  /** the ladder's words now, for the status line; null when no stop is under way */
  text(now: number): string | null {
    return this.ladder ? stopText(this.ladder, now) : null;
  }
}
