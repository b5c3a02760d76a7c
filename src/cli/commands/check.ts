import type { CommandModule } from 'yargs';
import { parseHostList } from '../../hosts/hosts.js';
import { combine, formatCheckRun } from '../../preflight/format.js';
import { bareLane } from '../../preflight/lane-ask.js';
import { checkBox, srunPrefix } from '../../preflight/probe-run.js';
import type { BoxCheck } from '../../preflight/verdict.js';
import { getPreset } from '../../presets/load.js';
import { LocalTarget } from '../../targets/local.js';
import type { Target } from '../../targets/target.js';
import { loadLanesForCli } from '../load-lanes.js';
import { remoteHome } from '../open-session.js';
import { requirePython } from '../preflight.js';
import { connectFromArgs } from '../remote.js';
import { reportFailure, usageError } from '../report-failure.js';
import { launchOfArgs, type TargetArgs, targetUsageError, withTargetOptions } from '../target-options.js';

interface CheckArgs extends TargetArgs {
  lane?: string;
  json?: boolean;
  demo?: boolean;
  'out-dir'?: string;
}

/** one box: connect (or this machine), probe, close */
async function checkOne(
  a: CheckArgs,
  host: string | undefined,
  lane: ReturnType<typeof bareLane>,
): Promise<BoxCheck[]> {
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

export const checkCommand: CommandModule<object, CheckArgs> = {
  command: 'check',
  describe:
    'preflight: is this box fit to train this lane? GO (exit 0) or NO-GO (exit 1), each check with its evidence',
  builder: (y) =>
    withTargetOptions(
      y
        .option('lane', {
          type: 'string',
          describe: 'the lane to check the box for (its Python, env, ranks)',
        })
        .option('json', { type: 'boolean', describe: 'print one JSON object' })
        .option('demo', {
          type: 'boolean',
          describe: "the demo's simulated GPU (lane demo-faulty-box shows every fault it can simulate)",
        })
        .option('runs-dir', {
          type: 'string',
          describe: 'where run directories go (default ~/.nsa-dbg/runs)',
        })
        .option('out-dir', {
          type: 'string',
          describe: 'the trainer’s out_dir, if not the lane’s or its config’s',
        })
        .option('cwd', {
          type: 'string',
          describe: 'the trainer’s working directory (default: here / remote home)',
        })
        .example('$0 check --lane ddp-nccl --host gpu1', '')
        .example('$0 check --demo --lane demo-faulty-box', ''),
    ) as never,
  handler: async (a) => {
    const usage = targetUsageError(a);
    if (usage) return usageError(usage);
    if (a.demo && a.hosts) return usageError('--demo checks one box: give --host or nothing, not --hosts');
    if (a.demo && !a.host) await requirePython();
    const t0 = performance.now();
    try {
      const lanes = loadLanesForCli(a.lane ? [a.lane] : []);
      const lane = a.lane ? getPreset(lanes, a.lane) : bareLane();
      const hosts = a.hosts ? parseHostList(a.hosts) : [a.host];
      const boxes = (await Promise.all(hosts.map((h) => checkOne(a, h, lane)))).flat();
      const run = combine(lane.name, boxes, (performance.now() - t0) / 1000);
      process.stdout.write(a.json ? `${JSON.stringify(run)}\n` : formatCheckRun(run));
      process.exitCode = run.go ? 0 : 1;
    } catch (e) {
      reportFailure(e);
    }
  },
};
