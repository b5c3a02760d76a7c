import type { CommandModule } from 'yargs';
import { getLane } from '../../lanes/load.js';
import { formatCheckRun } from '../../preflight/format.js';
import { bareLane } from '../../preflight/lane-ask.js';
import { type CheckBoxArgs, checkBoxes } from '../check-boxes.js';
import { loadLanesForCli } from '../load-lanes.js';
import { requirePython } from '../preflight.js';
import { reportFailure, usageError } from '../report-failure.js';
import { targetUsageError, withTargetOptions } from '../target-options.js';

interface CheckArgs extends CheckBoxArgs {
  lane?: string;
  json?: boolean;
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
    try {
      const lanes = loadLanesForCli(a.lane ? [a.lane] : []);
      const lane = a.lane ? getLane(lanes, a.lane) : bareLane();
      const run = await checkBoxes(a, lane);
      process.stdout.write(a.json ? `${JSON.stringify(run)}\n` : formatCheckRun(run));
      process.exitCode = run.go ? 0 : 1;
    } catch (e) {
      reportFailure(e);
    }
  },
};
