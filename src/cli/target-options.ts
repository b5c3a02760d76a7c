/**
 * Where runs go, as the command line says it: the same options for `run`, `demo`, the notebook
 * and `bisect` (`--host`, `--slurm` and its job options, `--hosts` and its rendezvous), checked
 * together before anything connects or runs.
 */
import type { Argv } from 'yargs';
import { parseHostList } from '../hosts/hosts.js';
import { DEFAULT_RDZV_PORT, type LaunchSpec } from '../runs/launch-spec.js';
import { type HostArgs, withHostOptions } from './remote.js';

export interface TargetArgs extends HostArgs {
  slurm?: boolean;
  nodes?: number;
  partition?: string;
  time?: string;
  'sbatch-arg'?: string[];
  'rdzv-port'?: number;
  hosts?: string;
  'rdzv-host'?: string;
  'runs-dir'?: string;
  cwd?: string;
}

/** the options of where runs go; `demo`: the command runs the bundled demo (no --hosts) */
export function withTargetOptions<T>(y: Argv<T>): Argv<T & TargetArgs> {
  return withHostOptions(y)
    .option('slurm', {
      type: 'boolean',
      describe:
        'submit as a Slurm job (sbatch; one torchrun agent per node at a c10d rendezvous); the lane needs launcher: torchrun',
    })
    .option('nodes', {
      type: 'number',
      describe:
        'with --slurm: nodes (default 1); with --demo --ranks: simulated nodes the ranks are spread over',
    })
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
    }) as Argv<T & TargetArgs>;
}

/** flags that only make sense together, checked before anything connects or runs */
export function targetUsageError(
  a: TargetArgs & { demo?: boolean; ranks?: number; 'out-dir'?: string },
): string | null {
  // the demo's ranks spread over simulated nodes (`--demo --ranks 512 --nodes 64`)
  const demoNodes = !a.slurm && a.demo === true && a.ranks !== undefined;
  const slurmOnly = (['nodes', 'partition', 'time', 'sbatch-arg'] as const).filter(
    (k) => a[k] !== undefined && !(k === 'nodes' && demoNodes),
  );
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

/** a Slurm job's settings from the options; undefined: the place's own way (a PTY, detached) */
export function launchOfArgs(a: TargetArgs): LaunchSpec | undefined {
  if (!a.slurm) return undefined;
  return {
    kind: 'slurm',
    nodes: a.nodes ?? 1,
    ...(a.partition ? { partition: a.partition } : {}),
    ...(a.time ? { time: a.time } : {}),
    sbatchArgs: (a['sbatch-arg'] ?? []).map(String),
    rdzvPort: a['rdzv-port'] ?? DEFAULT_RDZV_PORT,
  };
}
