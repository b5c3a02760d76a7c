import type { CommandModule } from 'yargs';
import type { CliDeps } from '../deps.js';
import { loadLanesForCli } from '../load-lanes.js';
import { openerFromArgs } from '../open-from-args.js';
import { requirePython } from '../preflight.js';
import { type HostArgs, withHostOptions } from '../remote.js';
import { reportFailure } from '../report-failure.js';
import { showDashboard, showHeadless } from '../show.js';

interface DemoArgs extends HostArgs {
  'step-ms'?: number;
  ranks?: number;
  nodes?: number;
  lane: string;
  steps?: number;
  'runs-dir'?: string;
  headless?: boolean;
  json?: boolean;
}

export function demoCommand(deps: CliDeps): CommandModule<object, DemoArgs> {
  return {
    command: 'demo',
    describe: 'open the dashboard on the bundled demo trainer (simulated trainer and GPU, no GPU needed)',
    builder: (y) =>
      withHostOptions(
        y
          .option('step-ms', { type: 'number', describe: 'milliseconds per training step (default 300)' })
          .option('ranks', {
            type: 'number',
            describe: 'rank processes (lanes demo-rank-stall, demo-rank-crash, demo-rank-straggler)',
          })
          .option('nodes', {
            type: 'number',
            describe:
              'with --ranks: spread the ranks over this many simulated nodes (8 ranks a node: --ranks 512 --nodes 64)',
          })
          .option('lane', { type: 'string', default: 'baseline', describe: 'lane to start with' })
          .option('steps', { type: 'number', describe: 'steps to run (default: the lane’s)' })
          .option('runs-dir', {
            type: 'string',
            describe: 'where run directories go (default ~/.nsa-dbg/runs)',
          })
          .option('headless', {
            type: 'boolean',
            describe: 'no dashboard: run to the end (or a confirmed stall) and report, like run --headless',
          })
          .option('json', { type: 'boolean', describe: 'with --headless: print one JSON object' }),
      ) as never,
    handler: async (a) => {
      if (!a.host) await requirePython();
      try {
        const opener = await openerFromArgs(a);
        const session = opener.open({
          lanes: loadLanesForCli([a.lane]),
          lane: a.lane,
          steps: a.steps,
          demo: true,
          stepMs: a['step-ms'],
          ranks: a.ranks,
          nodes: a.nodes,
          runsRoot: a['runs-dir'],
        });
        // a check that an install works, without a terminal: the same path as run --demo --headless
        if (a.headless)
          await showHeadless(session, a.json, (r) => `${r.go ? 'GO' : 'NO-GO'} lane ${r.lane}: ${r.verdict}`);
        await showDashboard(deps, session);
      } catch (e) {
        reportFailure(e);
      }
    },
  };
}
