/**
 * Lanes that launch through torchrun. nsa-dbg never invents a launcher of its own: it builds the
 * torchrun line from the lane (`launcher: { torchrun: { command, nproc_per_node, args } }`) and puts
 * torchrun's per-rank logs (`--log_dir`) inside the run dir, so they stay with the evidence. The
 * command after `--` (or the lane's) is then the training script and its arguments; a leading
 * Python interpreter and its flags are dropped, since torchrun starts Python itself.
 */

import { isObj, LaneError, stringList } from './lane.js';
import { launchersInCommand } from './launchers.js';

export interface TorchrunLauncher {
  /** how torchrun is started, split on spaces: `torchrun`, `python3 -m torch.distributed.run` */
  command: string[];
  nprocPerNode: number;
  /** more torchrun flags, before the script (`--tee 3`, `--nnodes 1`) */
  args: string[];
}

/** torchrun's per-rank logs, inside the run dir */
export const TORCHRUN_LOG_DIR = 'torchrun-logs';
const KNOWN = new Set(['command', 'nproc_per_node', 'args']);

/** `launcher:` of a lane file; undefined when the lane runs its command directly */
export function validateLauncher(file: string, v: unknown): TorchrunLauncher | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v) || Object.keys(v).length !== 1 || !isObj(v.torchrun))
    throw new LaneError(file, 'launcher', 'must be a mapping with one key, torchrun');
  const t = v.torchrun;
  for (const k of Object.keys(t))
    if (!KNOWN.has(k)) throw new LaneError(file, `launcher.torchrun.${k}`, 'is not a known field');
  const command = t.command ?? 'torchrun';
  if (typeof command !== 'string' || command.trim() === '')
    throw new LaneError(file, 'launcher.torchrun.command', 'must be a command such as torchrun');
  const n = t.nproc_per_node;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 1024)
    throw new LaneError(file, 'launcher.torchrun.nproc_per_node', 'must be a whole number ≥ 1');
  const args = stringList(file, 'launcher.torchrun.args', t.args) ?? [];
  return { command: command.trim().split(/\s+/), nprocPerNode: n, args };
}

const PYTHON = /(?:^|\/)python(?:\d+(?:\.\d+)*)?$/;

/** the script and its arguments: a leading `python3 -u` (torchrun runs Python itself) dropped */
export function scriptOf(command: string[]): string[] {
  if (command.length === 0 || !PYTHON.test(command[0]!)) return command;
  let i = 1;
  while (i < command.length && command[i]!.startsWith('-') && command[i] !== '-m') i++;
  // `python -m pkg.mod args` → torchrun's `-m pkg.mod args`
  return command.slice(i);
}

/** the refusal of a command that starts a launcher of its own under a lane that starts torchrun */
export const LAUNCHER_TWICE = 'launches through torchrun already';

/** the whole torchrun line for a run whose dir is `runDir` */
export function torchrunArgv(
  l: TorchrunLauncher,
  runDir: string,
  command: string[],
  nproc?: number,
): string[] {
  // torchrun around torchrun would start a launcher per rank, each starting ranks of its own
  const typed = launchersInCommand(command)[0];
  if (typed !== undefined)
    throw new Error(
      `the lane ${LAUNCHER_TWICE}: give the training script after --, without ${typed} (or run it on a lane without launcher:)`,
    );
  return [
    ...l.command,
    '--nproc_per_node',
    String(nproc ?? l.nprocPerNode),
    '--log_dir',
    `${runDir}/${TORCHRUN_LOG_DIR}`,
    ...l.args,
    ...scriptOf(command),
  ];
}
