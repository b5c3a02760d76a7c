/**
 * A run controller for a run, with the launch kind its spec names: a new run (the kind completes
 * the spec first: its layout, what it needs of the lane), or one picked up from its folder.
 */
import type { FollowerFactory } from '../runs/follower.js';
import type { RunSpec } from '../runs/launcher.js';
import { RunController, type RunEvents } from '../runs/run-controller.js';
import { readRunSpec } from '../runs/spec-file.js';
import type { Target } from '../targets/target.js';
import { kindOf } from './kinds.js';

export interface RunPlace {
  /** how the run's files are followed before its kind has a say (a remote run: its mirror) */
  follower?: (spec: RunSpec) => FollowerFactory;
  /** the run folder on this machine (a remote run's mirror); default: the run dir itself */
  localDir?: (spec: RunSpec) => string;
}

/** a controller for a new run (start it with `start()`) */
export function newRun(
  target: Target,
  spec: RunSpec,
  events: RunEvents,
  place: RunPlace = {},
): RunController {
  return new RunController(target, spec, events, {
    kind: kindOf(spec.launcher),
    follower: place.follower?.(spec),
    localDir: place.localDir?.(spec),
  });
}

/** the run in `runDir` (its command.json read and migrated), picked up by its kind */
export async function attachRun(
  target: Target,
  runDir: string,
  events: RunEvents,
  place: RunPlace = {},
): Promise<RunController> {
  const spec = await readRunSpec(target, runDir);
  if (!spec) throw new Error(`${target.label}:${runDir} is not an nsa-dbg run (no command.json)`);
  const rc = newRun(target, spec, events, place);
  await rc.attach();
  return rc;
}
