/**
 * The launch kind `pty`: the launcher runs in a PTY of this nsa-dbg (a local run by default), its
 * output both in that terminal and in stdout.log. Closing the PTY ends the run, so quitting stops
 * it; a run picked up again with `attach` has no PTY here, and quitting leaves it alone.
 */

import type { PtyHandle } from '../targets/target.js';
import type { ActiveLaunch, LaunchContext, LaunchKind, Size } from './launch-kind.js';
import type { PtyLaunch } from './launch-spec.js';
import { launcherScript } from './launcher.js';
import { endIfLost, processActive, processKind, processStoppable } from './process-launch.js';

/** after the PTY ends, how long the run's own exit_code may take to reach the followers */
const EXIT_CODE_GRACE_MS = 300;

function active(ctx: LaunchContext<PtyLaunch>, pty: PtyHandle | null): ActiveLaunch {
  return {
    ...processActive(ctx, ''),
    async terminal(size: Size) {
      if (!pty) throw new Error('the run has no terminal');
      pty.resize(size.cols, size.rows);
      // the launcher's own PTY: it must stay open when the hand-over ends
      return { pty, release: () => {} };
    },
    async stoppable() {
      const run = await processStoppable(ctx);
      // never started: closing the PTY is all there is to stop
      if (run === null) pty?.close();
      return run;
    },
    dispose: () => pty?.close(),
  };
}

export const ptyKind: LaunchKind<PtyLaunch> = {
  ...processKind,
  async start(ctx, size) {
    const { spec, target, events } = ctx;
    await target.writeFile(`${spec.runDir}/run.sh`, launcherScript(spec, 'tee'));
    const pty = await target.spawnPty({ argv: ['sh', `${spec.runDir}/run.sh`], cwd: spec.cwd, ...size });
    pty.onData((d) => events.ptyData(d));
    pty.onExit((e) => {
      // the launcher records the trainer's status in exit_code; the followers get a moment to see it
      setTimeout(() => events.ended(e.exitCode), EXIT_CODE_GRACE_MS).unref?.();
    });
    return active(ctx, pty);
  },
  attach: async (ctx) => {
    void endIfLost(ctx).catch(() => undefined);
    return active(ctx, null);
  },
  leavesRunningOnQuit: (attached) => attached,
};
