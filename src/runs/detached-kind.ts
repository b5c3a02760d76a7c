/**
 * The launch kind `detached`: the run lives in a tmux session of its own on the box, else under
 * setsid+nohup (src/runs/detached.ts), so a dropped link, a sleeping laptop or a killed nsa-dbg never
 * signals it. Quitting leaves it running; `attach` picks it up again from its launch.json.
 */

import { followArgv, type LaunchInfo, launchDetached, readLaunchInfo } from './detached.js';
import type { ActiveLaunch, LaunchContext, LaunchKind } from './launch-kind.js';
import type { DetachedLaunch } from './launch-spec.js';
import { endIfLost, processActive, processKind } from './process-launch.js';

function active(ctx: LaunchContext<DetachedLaunch>, info: LaunchInfo | null): ActiveLaunch {
  const { target, spec } = ctx;
  return {
    ...processActive(ctx, ' (detached)'),
    async terminal(size) {
      // a fresh `tmux attach` (or a follower of stdout.log) each time, so a dropped link never
      // leaves a dead one behind; TMUX is unset so a client inside the user's own tmux attaches
      const show = info ?? { mode: 'nohup' as const };
      const pty = await target.spawnPty({
        argv: ['env', '-u', 'TMUX', ...followArgv(show, spec.runDir)],
        ...size,
      });
      return { pty, release: () => pty.close() };
    },
  };
}

export const detachedKind: LaunchKind<DetachedLaunch> = {
  ...processKind,
  start: async (ctx, size) =>
    active(ctx, await launchDetached(ctx.target, ctx.spec, size, ctx.spec.launcher.mode ?? 'auto')),
  attach: async (ctx) => {
    const launched = await readLaunchInfo(ctx.target, ctx.spec.runDir);
    void endIfLost(ctx).catch(() => undefined);
    return active(ctx, launched);
  },
  leavesRunningOnQuit: () => true,
};
