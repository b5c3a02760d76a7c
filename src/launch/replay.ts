/**
 * A finished run's folder on this machine, read to its end as a live run's would be (a notebook
 * cell's dashboard): its own files and those its layout names (each host's copy, the trainer's
 * out_dir copy), nothing asked of its launcher or target. It is no launch kind of its own: the
 * run's kind has nothing left to do.
 */

import { classifyRunPath, isFollowedFile, type RunLayout } from '../ingest/run-files.js';
import { layoutDirs } from '../runs/analyze-dir.js';
import type { FollowerFactory } from '../runs/follower.js';
import type { ActiveLaunch, LaunchKind } from '../runs/launch-kind.js';
import { endIfLost, processKind } from '../runs/process-launch.js';
import { RunController, type RunEvents } from '../runs/run-controller.js';
import { RunWatcher } from '../runs/run-watcher.js';
import { readRunSpec } from '../runs/spec-file.js';
import type { Target } from '../targets/target.js';

const ENDED = 'the run has ended: its output is in the log pane';

/** the folder and the subfolders its layout names, each file by its path in the folder */
function folderFollower(layout: RunLayout): FollowerFactory {
  return (target, dir, onChunk) => {
    const watchers: RunWatcher[] = [new RunWatcher(target, dir, onChunk, { filter: isFollowedFile })];
    for (const sub of layoutDirs(dir, layout))
      watchers.push(
        new RunWatcher(target, `${dir}/${sub}`, (name, chunk) => onChunk(`${sub}/${name}`, chunk), {
          filter: (name) => classifyRunPath(`${sub}/${name}`, layout) !== null,
        }),
      );
    return {
      start: () => {
        for (const w of watchers) w.start();
      },
      stop: async () => {
        await Promise.all(watchers.map((w) => w.stop()));
      },
    };
  };
}

/** nothing of the run is left to reach: the checks never act on a run that has ended */
const ended = (target: Target): ActiveLaunch => ({
  terminal: async () => {
    throw new Error(ENDED);
  },
  stoppable: async () => null,
  requestDump: async () => ({ message: ENDED, sent: false }),
  checksTarget: () => target,
  line: () => null,
  quitWords: () => 'The run has ended; nothing is left running.',
  dispose: () => {},
});

/** a run of one process tree, as a pty or detached run is, whose files are all there is left */
const replayKind: LaunchKind = {
  ...processKind,
  start: async () => {
    throw new Error(ENDED);
  },
  // a folder whose trainer is gone and left no exit_code (its nsa-dbg was killed with it) ends as
  // the process kinds' attach ends it: status unknown, not a run that never ends
  attach: async (ctx) => {
    void endIfLost(ctx).catch(() => undefined);
    return ended(ctx.target);
  },
  follower: (_target, spec) => folderFollower(spec.layout ?? {}),
  leavesRunningOnQuit: () => true,
};

/** a controller that reads the finished run in `folder` (on this machine) to its end */
export async function replayRun(target: Target, folder: string, events: RunEvents): Promise<RunController> {
  const spec = await readRunSpec(target, folder);
  if (!spec) throw new Error(`${folder} is not an nsa-dbg run (no command.json)`);
  // the folder is the run: no trainer out_dir to copy again, no remote dir to reach
  const here = { ...spec, runDir: folder, outDir: folder };
  const rc = new RunController(target, here, events, { kind: replayKind });
  await rc.attach();
  return rc;
}
