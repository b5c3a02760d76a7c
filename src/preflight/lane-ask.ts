/**
 * What a lane asks of a box, read from the lane as a run of it would be built: the Python that
 * will run the trainer (with its flags), the ranks on each node, the env, the run dir and the
 * trainer's out_dir. A check without --lane asks for one rank of plain `python3`.
 */
import { DEFAULT_COMMAND, DEFAULT_STOP, type Lane } from '../lanes/lane.js';
import { buildRunSpec } from '../runs/build-spec.js';
import type { RunSpec } from '../runs/launcher.js';

const PYTHON = /(?:^|\/)python(?:\d+(?:\.\d+)*)?$/;

/** the interpreter and its own flags (`python3 -S -u`), up to the script, `-m` or `-c` */
export function laneInterpreter(lane: Lane, demo: boolean): string[] {
  if (demo) return ['python3'];
  const command = lane.launcher ? lane.launcher.command : (lane.command ?? DEFAULT_COMMAND);
  if (!PYTHON.test(command[0] ?? '')) return ['python3'];
  let i = 1;
  while (i < command.length && command[i]!.startsWith('-') && command[i] !== '-m' && command[i] !== '-c') i++;
  return command.slice(0, i);
}

export function ranksOf(lane: Lane, demo: boolean): { n: number; source: string } {
  if (lane.launcher)
    return {
      n: lane.launcher.nprocPerNode,
      source: `lane ${lane.name}: launcher.torchrun.nproc_per_node ${lane.launcher.nprocPerNode}`,
    };
  const demoRanks = Number(lane.demoEnv.NSA_DEMO_RANKS ?? 1);
  if (demo && demoRanks > 1) return { n: demoRanks, source: `lane ${lane.name}: demoEnv NSA_DEMO_RANKS` };
  return { n: 1, source: `lane ${lane.name}: one process, no launcher` };
}

/** the lane a check without --lane stands for: one rank, plain python3, no env */
export function bareLane(): Lane {
  return {
    name: '(none)',
    description: 'no lane given: one rank of python3',
    env: {},
    demoEnv: {},
    args: [],
    command: ['python3'],
    stepsFlag: '',
    acceptance: { finiteLoss: false, noStall: false },
    stop: DEFAULT_STOP,
    detector: {},
    source: 'nsa-dbg check',
  };
}

/** the spec a run of this lane would get here, nothing started */
export function specOf(
  lane: Lane,
  o: { demo: boolean; runsRoot?: string; cwd: string; outDir?: string },
): RunSpec {
  return buildRunSpec({
    lane,
    runsRoot: o.runsRoot,
    cwd: o.cwd,
    outDir: o.outDir,
    ...(o.demo ? { demo: {} } : {}),
  });
}
