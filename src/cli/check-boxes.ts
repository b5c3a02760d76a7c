/**
 * The box check of a lane on the place the command line named (this machine, `--host`, `--slurm`,
 * `--hosts`): each box connected, probed and closed, then one GO / NO-GO over all of them.
 * `nsa-dbg check` prints it; the notebook records it as a check cell.
 */
import { parseHostList } from '../hosts/hosts.js';
import { type CheckRun, combine } from '../preflight/format.js';
import { checkBox, srunPrefix } from '../preflight/probe-run.js';
import type { BoxCheck } from '../preflight/verdict.js';
import type { Preset } from '../presets/preset.js';
import { LocalTarget } from '../targets/local.js';
import type { Target } from '../targets/target.js';
import { remoteHome } from './open-session.js';
import { connectFromArgs } from './remote.js';
import { launchOfArgs, type TargetArgs } from './target-options.js';

export interface CheckBoxArgs extends TargetArgs {
  demo?: boolean;
  'out-dir'?: string;
}

/** one box: connect (or this machine), probe, close */
async function checkOne(a: CheckBoxArgs, host: string | undefined, lane: Preset): Promise<BoxCheck[]> {
  const target: Target = host ? await connectFromArgs({ ...a, host }) : new LocalTarget();
  try {
    const home = host ? await remoteHome(target) : null;
    const launch = launchOfArgs(a);
    const boxes = await checkBox(target, lane, {
      demo: !!a.demo,
      home,
      runsRoot: a['runs-dir'],
      cwd: a.cwd,
      outDir: a['out-dir'],
      ...(launch?.kind === 'slurm' ? { wrap: srunPrefix(launch) } : {}),
    });
    // the alias the user gave names the box, with the name the box gives itself
    return host ? boxes.map((b) => ({ ...b, host: b.host === host ? host : `${host} (${b.host})` })) : boxes;
  } finally {
    await target.close();
  }
}

/** every box of the place checked for `lane`, at once; `now` times the whole check */
export async function checkBoxes(
  a: CheckBoxArgs,
  lane: Preset,
  now: () => number = () => performance.now(),
): Promise<CheckRun> {
  const t0 = now();
  const hosts = a.hosts ? parseHostList(a.hosts) : [a.host];
  const boxes = (await Promise.all(hosts.map((h) => checkOne(a, h, lane)))).flat();
  return combine(lane.name, boxes, (now() - t0) / 1000);
}
