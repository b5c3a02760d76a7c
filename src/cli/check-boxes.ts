/**
 * The box check of a lane on the place the command line named (this machine, `--host`, `--slurm`,
 * `--hosts`): each box connected, probed and closed, then one GO / NO-GO over all of them.
 * `nsa-dbg check` prints it; the notebook records it as a check cell.
 */
import { parseHostList } from '../hosts/hosts.js';
import type { Lane } from '../lanes/lane.js';
import { type CheckRun, combine } from '../preflight/format.js';
import { checkBox, srunPrefix } from '../preflight/probe-run.js';
import type { BoxCheck } from '../preflight/verdict.js';
import { LocalTarget } from '../targets/local.js';
import type { Target } from '../targets/target.js';
import { remoteHome } from './open-session.js';
import { connectFromArgs } from './remote.js';
import { launchOfArgs, type TargetArgs } from './target-options.js';

export interface CheckBoxArgs extends TargetArgs {
  demo?: boolean;
  'out-dir'?: string;
}

/** a box already reached: the notebook's own connection to its one box (no second login) */
export interface ReachedBox {
  target: Target;
  /** the remote login's home; null: this machine */
  home: string | null;
}

/** probe one box; the alias the user gave names it, with the name the box gives itself */
async function probeOn(a: CheckBoxArgs, host: string | undefined, box: ReachedBox, lane: Lane) {
  const launch = launchOfArgs(a);
  const boxes = await checkBox(box.target, lane, {
    demo: !!a.demo,
    home: box.home,
    runsRoot: a['runs-dir'],
    cwd: a.cwd,
    outDir: a['out-dir'],
    ...(launch?.kind === 'slurm' ? { wrap: srunPrefix(launch) } : {}),
  });
  return host ? boxes.map((b) => ({ ...b, host: b.host === host ? host : `${host} (${b.host})` })) : boxes;
}

/** one box: connect (or this machine), probe, close */
async function checkOne(a: CheckBoxArgs, host: string | undefined, lane: Lane): Promise<BoxCheck[]> {
  const target: Target = host ? await connectFromArgs({ ...a, host }) : new LocalTarget();
  try {
    return await probeOn(a, host, { target, home: host ? await remoteHome(target) : null }, lane);
  } finally {
    await target.close();
  }
}

/**
 * Every box of the place checked for `lane`, at once; `now` times the whole check. `reached`: the
 * one box's connection the caller already holds (left open), used instead of a new login (which
 * could ask for a key's passphrase while a view owns the terminal); `--hosts` connects to each.
 */
export async function checkBoxes(
  a: CheckBoxArgs,
  lane: Lane,
  reached?: ReachedBox,
  now: () => number = () => performance.now(),
): Promise<CheckRun> {
  const t0 = now();
  const boxes =
    reached && !a.hosts
      ? await probeOn(a, a.host, reached, lane)
      : (
          await Promise.all((a.hosts ? parseHostList(a.hosts) : [a.host]).map((h) => checkOne(a, h, lane)))
        ).flat();
  return combine(lane.name, boxes, (now() - t0) / 1000);
}
