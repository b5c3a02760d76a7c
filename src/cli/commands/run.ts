import type { CommandModule } from 'yargs';
import { DEFAULT_COMMAND } from '../../lanes/lane.js';
import { recordRun } from '../../notebook/record.js';
import { evidenceDirOf, NotebookStore } from '../../notebook/store.js';
import { stepCount } from '../../runs/build-spec.js';
import { runHeadless } from '../../session/headless.js';
import type { CliDeps } from '../deps.js';
import { exitAfter } from '../exit-after.js';
import { loadLanesForCli } from '../load-lanes.js';
import { openerFromArgs } from '../open-from-args.js';
import { requirePython } from '../preflight.js';
import { reportFailure, usageError } from '../report-failure.js';
import { showDashboard } from '../show.js';
import { type TargetArgs, targetUsageError, withTargetOptions } from '../target-options.js';

interface RunArgs extends TargetArgs {
  lane: string;
  steps?: number;
  headless?: boolean;
  json?: boolean;
  demo?: boolean;
  'step-ms'?: number;
  ranks?: number;
  'out-dir'?: string;
  notebook?: string;
  '--'?: string[];
}

export function runCommand(deps: CliDeps): CommandModule<object, RunArgs> {
  return {
    command: 'run',
    describe: 'run a trainer command with a lane’s env: nsa-dbg run --lane NAME [--steps N] -- COMMAND...',
    builder: (y) =>
      withTargetOptions(
        y
          .parserConfiguration({ 'populate--': true })
          .option('lane', {
            type: 'string',
            demandOption: true,
            describe: 'lane (env preset), see `nsa-dbg lanes`',
          })
          .option('steps', {
            type: 'number',
            describe: "steps to run (passed with the lane's stepsFlag: --steps N by default)",
          })
          .option('headless', {
            type: 'boolean',
            describe: 'no dashboard: run to the end (or a confirmed stall) and report',
          })
          .option('json', { type: 'boolean', describe: 'with --headless: print one JSON object' })
          .option('demo', { type: 'boolean', describe: 'run the bundled demo trainer instead of a command' })
          .option('step-ms', { type: 'number', describe: 'with --demo: milliseconds per step' })
          .option('ranks', { type: 'number', describe: 'with --demo: rank processes' })
          .option('runs-dir', {
            type: 'string',
            describe: 'where run directories go (default ~/.nsa-dbg/runs)',
          })
          .option('out-dir', { type: 'string', describe: 'the trainer’s out_dir, if not the run dir' })
          .option('cwd', {
            type: 'string',
            describe: 'working directory for the command (default: here / remote home)',
          })
          .option('notebook', {
            type: 'string',
            describe:
              'with --headless: append the run as a cell of this notebook (its evidence goes beside it)',
          })
          .example('$0 run --lane batched-prefill --steps 200 -- python -u scripts/train_showcase.py', '')
          .example('$0 run --slurm --nodes 2 --partition gpu --lane ddp -- python -u train.py', '')
          .example('$0 run --hosts gpu1,gpu2 --lane ddp -- python -u train.py', '')
          .example('$0 run --headless --json --host gpu1 --lane baseline --demo --steps 20', ''),
      ) as never,
    handler: async (a) => {
      const command = (a['--'] ?? []).map(String);
      if (a.demo && command.length) return usageError('give either --demo or a command after --, not both');
      if (a.notebook && !a.headless)
        return usageError('--notebook with run needs --headless (or open it with `nsa-dbg --notebook FILE`)');
      const usage = targetUsageError(a);
      if (usage) return usageError(usage);
      if (a.demo && !a.host) await requirePython();
      let notebook: NotebookStore | null = null;
      try {
        // taken before the run, so a notebook held by another nsa-dbg fails fast and runs nothing
        if (a.notebook) notebook = NotebookStore.open(a.notebook);
        if (notebook?.openNote) process.stderr.write(`nsa-dbg: ${notebook.openNote}\n`);
        const lanes = loadLanesForCli([a.lane]);
        const lane = lanes.get(a.lane);
        // refused before anything starts: --steps against the command's own count
        if (lane && !a.demo)
          stepCount(
            lane,
            [...(command.length ? command : (lane.command ?? DEFAULT_COMMAND)), ...lane.args],
            a.steps,
            false,
          );
        const opener = await openerFromArgs(a, lanes.get(a.lane));
        const session = opener.open({
          lane: a.lane,
          lanes,
          steps: a.steps,
          demo: !!a.demo,
          stepMs: a['step-ms'],
          ranks: a.ranks,
          nodes: a.nodes,
          command: command.length ? command : undefined,
          runsRoot: a['runs-dir'],
          // a cell's folder goes beside the notebook (a remote run's mirror too)
          evidenceRoot: notebook ? evidenceDirOf(notebook.file) : undefined,
          outDir: a['out-dir'],
          cwd: a.cwd,
        });
        if (!a.headless) return await showDashboard(deps, session);
        const out = await runHeadless(session, {
          onProgress: (l) => {
            if (!a.json) process.stderr.write(`nsa-dbg: ${l}\n`);
          },
        });
        const r = out.result;
        if (notebook) {
          const cell = recordRun(notebook, {
            outcome: r,
            lane: session.currentLane(),
            target: opener.label,
            localDir: r.localDir,
          });
          notebook.close();
          if (!a.json) process.stderr.write(`nsa-dbg: cell ${cell.id} added to ${notebook.file}\n`);
        }
        // the SSH connection and timers must not keep the process alive: exit once the text is out
        await exitAfter(
          a.json
            ? `${JSON.stringify(r)}\n`
            : `${r.go ? 'GO' : 'NO-GO'} lane ${r.lane}: ${r.verdict}, ${r.stepsReached} steps${r.reasons.length ? ` (${r.reasons.join('; ')})` : ''}${r.target?.reached ? `\n  target: ${r.target.how}` : ''}\n  run dir: ${opener.label}:${r.runDir}\n  evidence: ${r.localDir}\n${r.notes.map((n) => `  note: ${n}\n`).join('')}`,
          out.exitCode,
        );
      } catch (e) {
        notebook?.close();
        reportFailure(e);
      }
    },
  };
}
