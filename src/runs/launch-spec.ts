/**
 * How a run is launched, as its command.json records it (`launcher`): one of four kinds, each with
 * the settings only it needs. What each kind does with them lives in its own implementation
 * (src/runs/pty-kind.ts, src/runs/detached-kind.ts, src/slurm/slurm-kind.ts,
 * src/hosts/hosts-kind.ts, gathered in src/launch/kinds.ts); the rest of nsa-dbg asks the kind.
 */

/** a PTY of this nsa-dbg runs the launcher; closing the PTY ends the run */
export interface PtyLaunch {
  kind: 'pty';
}

export type DetachedMode = 'tmux' | 'nohup';

/** the run lives on its own (tmux, else setsid+nohup), so it outlives the connection and nsa-dbg */
export interface DetachedLaunch {
  kind: 'detached';
  /** how it is to be detached; absent: tmux when the box has it, else nohup */
  mode?: DetachedMode;
}

/** a Slurm batch job: one torchrun agent per node at a c10d rendezvous (src/slurm/) */
export interface SlurmLaunch {
  kind: 'slurm';
  /** nodes (one torchrun agent each) */
  nodes: number;
  partition?: string;
  /** --time, as sbatch takes it (`30`, `2:00:00`) */
  time?: string;
  /** more sbatch options, given on the sbatch command line (they override the script's lines) */
  sbatchArgs: string[];
  /** the c10d rendezvous port on the first node */
  rdzvPort: number;
}

/** one host of a `--hosts` run */
export interface HostEntry {
  /** as given on the command line (an ssh alias, user@host, …): the node's name in the evidence */
  alias: string;
  /** where run dirs live on that host (its ~/.nsa-dbg/runs, or --runs-dir) */
  runsRoot: string;
  /** the working directory there */
  cwd: string;
}

/** one detached torchrun agent per host over SSH, the rendezvous on the first (src/hosts/) */
export interface HostsLaunch {
  kind: 'hosts';
  hosts: HostEntry[];
  /** host:port of the c10d rendezvous, on the first host */
  rdzvEndpoint: string;
}

export type LaunchSpec = PtyLaunch | DetachedLaunch | SlurmLaunch | HostsLaunch;
export type LaunchKindName = LaunchSpec['kind'];

/** the kinds a command.json of this version may name */
export const LAUNCH_KINDS: readonly LaunchKindName[] = ['pty', 'detached', 'slurm', 'hosts'];

/** the default c10d rendezvous port on the first node (torchrun's own default) */
export const DEFAULT_RDZV_PORT = 29500;

/**
 * A run launched through torchrun: the run's `pid` is then torchrun's, which must never get SIGUSR1
 * (it does not forward it and dies of it); the ranks' pids come from their heartbeats.
 */
export interface TorchrunRun {
  nprocPerNode: number;
  /** how many words of the argv are torchrun itself (`python3 -m torch.distributed.run`: 3) */
  commandWords: number;
}
