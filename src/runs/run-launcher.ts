/**
 * Whether a run's own process is a launcher whose workers are the ranks: a lane's `launcher:`, or
 * one typed in the command (src/lanes/launchers.ts). Such a process is never a rank: never
 * signalled, never filed as rank 0; the ranks are found by their own records (heartbeats, the stack
 * hook's registrations, each from the process's own environment).
 */
import { launcherSetsRank, launchersInCommand } from '../lanes/launchers.js';
import type { RunSpec } from './launcher.js';

/** whether the run's pid is a launcher's, torchrun's or one the command names (it stands for no rank) */
export function runPidIsLauncher(spec: Pick<RunSpec, 'torchrun' | 'argv'>): boolean {
  return spec.torchrun !== undefined || launchersInCommand(spec.argv).length > 0;
}

/**
 * Whether only processes with RANK set are ranks (the stack hook's NSA_DBG_STACK_WORKERS=1): a
 * launcher that sets RANK in every worker (torchrun, DeepSpeed) starts them, or the demo's parent
 * does. srun and mpirun set a rank of their own (the hook reads it), and `accelerate launch` of one
 * process starts it without RANK, so they do not say so.
 */
export function launcherStartsRanks(spec: Pick<RunSpec, 'torchrun' | 'argv' | 'demo' | 'env'>): boolean {
  return spec.torchrun !== undefined || launcherSetsRank(launchersInCommand(spec.argv)) || demoParent(spec);
}

/** the many-rank demo: its parent process starts the ranks */
function demoParent(spec: Pick<RunSpec, 'argv' | 'demo' | 'env'>): boolean {
  const i = spec.argv.indexOf('--ranks');
  const ranks = Number(i >= 0 ? spec.argv[i + 1] : (spec.env.NSA_DEMO_RANKS ?? 1));
  return spec.demo === true && ranks > 1;
}
