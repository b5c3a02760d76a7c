import type { CommandModule } from 'yargs';
import { parseHostList } from '../../hosts/hosts.js';
import { recordRun } from '../../notebook/record.js';
import { evidenceDirOf, NotebookStore } from '../../notebook/store.js';
import { runHeadless } from '../../session/headless.js';
import { DEFAULT_RDZV_PORT } from '../../slurm/sbatch.js';
import type { CliDeps } from '../deps.js';
import { loadLanesForCli } from '../load-lanes.js';
import { openFromArgs } from '../open-from-args.js';
import { requirePython } from '../preflight.js';
import { type HostArgs, withHostOptions } from '../remote.js';
import { reportFailure } from '../report-failure.js';

interface RunArgs extends HostArgs {
  lane: string;
  steps?: number;
  headless?: boolean;
  json?: boolean;
  demo?: boolean;
  'step-ms'?: number;
  ranks?: number;
  'runs-dir'?: string;
  'out-dir'?: string;
  cwd?: string;
  notebook?: string;
  slurm?: boolean;
  nodes?: number;
  partition?: string;
  time?: string;
  'sbatch-arg'?: string[];
  'rdzv-port'?: number;
  hosts?: string;
  'rdzv-host'?: string;
  '--'?: string[];
}

export function runCommand(deps: CliDeps): CommandModule<object, RunArgs> {
  return {
    command: 'run',
    describe: 'run a trainer command with a lane’s env: nsa-dbg run --lane NAME [--steps N] -- COMMAND...',
    builder: (y) =>
      withHostOptions(
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
          .option('slurm', {
            type: 'boolean',
            describe:
              'submit as a Slurm job (sbatch; one torchrun agent per node at a c10d rendezvous); the lane needs launcher: torchrun',
          })
          .option('nodes', { type: 'number', describe: 'with --slurm: nodes (default 1)' })
          .option('partition', { type: 'string', describe: 'with --slurm: the partition' })
          .option('time', { type: 'string', describe: 'with --slurm: the time limit (sbatch --time)' })
          .option('sbatch-arg', {
            type: 'string',
            array: true,
            describe: 'with --slurm: one more sbatch option, e.g. --sbatch-arg=--account=ml (repeatable)',
          })
          .option('hosts', {
            type: 'string',
            describe:
              'run across these hosts (ssh aliases, comma-separated, each resolved like --host): one torchrun agent per host, the rendezvous on the first; the lane needs launcher: torchrun',
          })
          .option('rdzv-host', {
            type: 'string',
            describe:
              'with --hosts: the first host’s address as the others reach it (default: the address its sshd was reached on)',
          })
          .option('rdzv-port', {
            type: 'number',
            describe: 'with --slurm or --hosts: the c10d rendezvous port on the first node (default 29500)',
          })
          .example('$0 run --lane batched-prefill --steps 200 -- python -u scripts/train_showcase.py', '')
          .example('$0 run --slurm --nodes 2 --partition gpu --lane ddp -- python -u train.py', '')
          .example('$0 run --hosts gpu1,gpu2 --lane ddp -- python -u train.py', '')
          .example('$0 run --headless --json --host gpu1 --lane baseline --demo --steps 20', ''),
      ) as never,
    handler: async (a) => {
      const command = (a['--'] ?? []).map(String);
      if (a.demo && command.length) {
        process.stderr.write('nsa-dbg: give either --demo or a command after --, not both\n');
        process.exitCode = 2;
        return;
      }
      if (a.notebook && !a.headless) {
        process.stderr.write(
          'nsa-dbg: --notebook with run needs --headless (or open it with `nsa-dbg --notebook FILE`)\n',
        );
        process.exitCode = 2;
        return;
      }
      const usage = runUsageError(a);
      if (usage) {
        process.stderr.write(`nsa-dbg: ${usage}\n`);
        process.exitCode = 2;
        return;
      }
      if (a.slurm && a.nodes !== undefined && (!Number.isInteger(a.nodes) || a.nodes < 1)) {
        process.stderr.write('nsa-dbg: --nodes must be a whole number ≥ 1\n');
        process.exitCode = 2;
        return;
      }
      if (a.demo && !a.host) await requirePython();
      let notebook: NotebookStore | null = null;
      try {
        // taken before the run, so a notebook held by another nsa-dbg fails fast and runs nothing
        if (a.notebook) notebook = NotebookStore.open(a.notebook);
        const opened = await openFromArgs(a, {
          presets: loadLanesForCli([a.lane]),
          lane: a.lane,
          steps: a.steps,
          demo: !!a.demo,
          stepMs: a['step-ms'],
          ranks: a.ranks,
          command: command.length ? command : undefined,
          // with --hosts, --runs-dir is each host's and the cell's folder is here
          runsRoot:
            (a.hosts ? undefined : a['runs-dir']) ??
            (notebook && !a.host ? evidenceDirOf(notebook.file) : undefined),
          outDir: a['out-dir'],
          cwd: a.cwd,
          ...(a.slurm
            ? {
                slurm: {
                  nodes: a.nodes ?? 1,
                  partition: a.partition,
                  time: a.time,
                  sbatchArgs: (a['sbatch-arg'] ?? []).map(String),
                  rdzvPort: a['rdzv-port'] ?? DEFAULT_RDZV_PORT,
                },
              }
            : {}),
        });
        if (!a.headless) {
          const tui = await deps.loadTui();
          await opened.session.start();
          await tui.runTui(opened.session);
          return;
        }
        const out = await runHeadless(opened.session, {
          localDir: opened.localDirOf,
          onProgress: (l) => {
            if (!a.json) process.stderr.write(`nsa-dbg: ${l}\n`);
          },
        });
        const r = out.result;
        if (notebook) {
          const cell = recordRun(notebook, {
            outcome: r,
            preset: opened.session.currentPreset(),
            target: opened.label,
            localDir: r.localDir,
          });
          notebook.close();
          if (!a.json) process.stderr.write(`nsa-dbg: cell ${cell.id} added to ${notebook.file}\n`);
        }
        if (a.json) process.stdout.write(`${JSON.stringify(r)}\n`);
        else
          process.stdout.write(
            `${r.go ? 'GO' : 'NO-GO'} lane ${r.lane}: ${r.verdict}, ${r.stepsReached} steps${r.reasons.length ? ` (${r.reasons.join('; ')})` : ''}\n  run dir: ${opened.label}:${r.runDir}\n  evidence: ${r.localDir}\n`,
          );
        process.exitCode = out.exitCode;
        // the SSH connection and timers must not keep the process alive
        process.exit(out.exitCode);
      } catch (e) {
        notebook?.close();
        reportFailure(e);
      }
    },
  };
}

/** flags that only make sense together, checked before anything connects or runs */
function runUsageError(a: RunArgs): string | null {
  const slurmOnly = (['nodes', 'partition', 'time', 'sbatch-arg'] as const).filter((k) => a[k] !== undefined);
  if (!a.slurm && slurmOnly.length) return `--${slurmOnly[0]} needs --slurm`;
  if (a['rdzv-port'] !== undefined && !a.slurm && !a.hosts) return '--rdzv-port needs --slurm or --hosts';
  if (a['rdzv-host'] !== undefined && !a.hosts) return '--rdzv-host needs --hosts';
  if (a.hosts !== undefined) {
    if (a.slurm) return 'give either --hosts or --slurm, not both';
    if (a.host) return 'give either --host (one box) or --hosts (several), not both';
    if (a.demo) return '--hosts runs a torchrun lane’s command: give it after --, not --demo';
    if (a['out-dir']) return '--hosts keeps each host’s evidence in its run dir: --out-dir is not supported';
    try {
      parseHostList(a.hosts);
    } catch (e) {
      return (e as Error).message;
    }
  }
  return null;
}
