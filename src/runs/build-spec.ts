import { homedir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_COMMAND, type Lane } from '../lanes/lane.js';
import { torchrunArgv } from '../lanes/torchrun.js';
import { stepsArgs, stepsInCommand, trainerOf } from '../lanes/trainers.js';
import { packageRoot } from '../util/package-root.js';
import type { LaunchSpec } from './launch-spec.js';
import { newRunId, type RunSpec } from './launcher.js';

export interface SpecOptions {
  lane: Lane;
  /** the trainer command after `--`; otherwise the lane's, otherwise the nsa-vibe default */
  command?: string[];
  steps?: number;
  /** run the bundled demo trainer */
  demo?: {
    stepMs?: number;
    /** rank processes (the many-rank demo); default: the lane's NSA_DEMO_RANKS, else 1 */
    ranks?: number;
    /** simulated nodes the ranks are spread over (their node records make each one asked as a node) */
    nodes?: number;
    /** a copy inside the run dir (remote boxes) */
    inRunDir?: boolean;
  };
  cwd?: string;
  /** where run dirs live on the target (default ~/.nsa-dbg/runs) */
  runsRoot?: string;
  /** trainer out_dir, relative to cwd; default: the run dir itself */
  outDir?: string;
  now?: Date;
  /** torchrun lanes: ranks per node instead of the lane's nproc_per_node */
  nprocPerNode?: number;
  /**
   * how the run is launched (default: a PTY of this nsa-dbg); its kind completes the spec (its
   * folder layout, what it needs of the lane) before the run starts
   */
  launch?: LaunchSpec;
}

export function defaultRunsRoot(env = process.env): string {
  return env.NSA_DBG_HOME ? join(env.NSA_DBG_HOME, 'runs') : join(env.HOME || homedir(), '.nsa-dbg', 'runs');
}

/** where a remote demo's copy of the bundled trainer goes, inside the run dir */
export const DEMO_DIR_IN_RUN = 'demo';

export function demoTrainerPath(): string {
  return join(packageRoot(), 'src', 'demo', 'nsa_demo_trainer.py');
}

export function demoShimPath(): string {
  return join(packageRoot(), 'src', 'demo', 'nvidia_smi_shim.py');
}

/** `--steps N` against a count the command already passes: the user must say which one counts */
export class StepsConflict extends Error {}

/**
 * The run's step count and the arguments that pass it. The command's own count wins: a count the
 * command already passes with the steps flag is never overridden (the trainer takes the last one),
 * and the lane's `steps` then only sets the acceptance; `--steps N` that contradicts it is refused.
 * Otherwise our count is passed with the lane's flag, else the known trainer's, else --steps.
 */
export function stepCount(
  lane: Lane,
  argv: string[],
  cliSteps: number | undefined,
  demo: boolean,
): { steps: number | undefined; append: string[] } {
  const flag = demo ? '--steps' : (lane.stepsFlag ?? trainerOf(argv)?.stepsFlag ?? '--steps');
  const given = stepsInCommand(flag, argv);
  if (given !== undefined && cliSteps !== undefined && cliSteps !== given)
    throw new StepsConflict(
      `--steps ${cliSteps} contradicts the command's own ${stepsArgs(flag, given).join(' ')}: give one of them`,
    );
  const steps = cliSteps ?? lane.steps ?? given;
  return { steps, append: given === undefined && steps !== undefined ? stepsArgs(flag, steps) : [] };
}

/** lane + CLI choices → the exact argv/env/dirs of one run (pure apart from the clock/randomness) */
export function buildRunSpec(o: SpecOptions): RunSpec {
  const { lane } = o;
  const runId = newRunId(lane.name, o.now);
  const runDir = `${o.runsRoot ?? defaultRunsRoot()}/${runId}`;
  const cwd = o.cwd ?? process.cwd();
  const outDir = o.outDir ? (o.outDir.startsWith('/') ? o.outDir : `${cwd}/${o.outDir}`) : runDir;
  let argv: string[];
  let env = { ...lane.env };
  if (o.demo) {
    argv = [
      'python3',
      '-u',
      o.demo.inRunDir ? `${runDir}/${DEMO_DIR_IN_RUN}/nsa_demo_trainer.py` : demoTrainerPath(),
      '--dataset',
      'synthetic',
      '--ddp',
      '0',
      '--out-dir',
      outDir,
      ...(o.demo.stepMs ? ['--step-ms', String(o.demo.stepMs)] : []),
      ...(o.demo.ranks ? ['--ranks', String(o.demo.ranks)] : []),
      ...(o.demo.ranks && o.demo.nodes && o.demo.nodes > 1 ? ['--nodes', String(o.demo.nodes)] : []),
    ];
    env = { ...env, ...lane.demoEnv };
  } else {
    // under torchrun the default trainer keeps its DDP default (`--ddp -1`: on when WORLD_SIZE > 1)
    const dflt = lane.launcher ? DEFAULT_COMMAND.slice(0, -2) : DEFAULT_COMMAND;
    argv = [...(o.command?.length ? o.command : (lane.command ?? dflt))];
  }
  argv.push(...lane.args);
  const counted = stepCount(lane, argv, o.steps, !!o.demo);
  argv.push(...counted.append);
  const steps = counted.steps;
  const torchrun = lane.launcher;
  if (torchrun !== undefined) argv = torchrunArgv(torchrun, runDir, argv, o.nprocPerNode);
  // `{runDir}` in a lane's env value: files that belong with the evidence (NCCL flight recorder)
  for (const [k, v] of Object.entries(env))
    if (v.includes('{runDir}')) env[k] = v.split('{runDir}').join(runDir);
  return {
    runId,
    runDir,
    argv,
    env,
    cwd,
    lane: lane.name,
    steps,
    outDir,
    createdAt: (o.now ?? new Date()).toISOString(),
    demo: !!o.demo,
    detector: lane.detector,
    ...(lane.stackSignal === undefined ? {} : { stackSignal: lane.stackSignal }),
    ...(lane.stepRegex === undefined ? {} : { stepRegex: lane.stepRegex }),
    layout: {},
    launcher: o.launch ?? { kind: 'pty' },
    ...(torchrun === undefined
      ? {}
      : {
          torchrun: {
            nprocPerNode: o.nprocPerNode ?? torchrun.nprocPerNode,
            commandWords: torchrun.command.length,
          },
        }),
  };
}
