/**
 * Launchers typed in the command (`nsa-dbg run --lane L -- torchrun --nproc_per_node 3 train.py`),
 * recognised as a lane's `launcher:` is (torchrun.ts): the process nsa-dbg starts is then a
 * launcher, never a rank and never signalled, and its workers are the ranks. nsa-dbg's stack hook
 * (src/stacks/sitecustomize.py) recognises the Python ones by their own command line too, so a
 * launcher that nsa-dbg cannot see (inside a user's shell script) stays out of the ranks as well.
 */

export type LauncherName = 'torchrun' | 'accelerate' | 'deepspeed' | 'srun' | 'mpirun';

const PYTHON = /^python(?:\d+(?:\.\d+)*)?$/;
// Maps, not object literals: the keys are words of a user's command, and a plain object would
// answer `constructor` or `toString` with an Object.prototype function
/** `python -m <module>` of a launcher */
const MODULES = new Map<string, LauncherName>([
  ['torch.distributed.run', 'torchrun'],
  ['torch.distributed.launch', 'torchrun'],
  ['accelerate.commands.launch', 'accelerate'],
  ['deepspeed.launcher.launch', 'deepspeed'],
  ['deepspeed.launcher.runner', 'deepspeed'],
]);
/** a launcher's own program (accelerate's only with `launch`) */
const PROGRAMS = new Map<string, LauncherName>([
  ['torchrun', 'torchrun'],
  ['deepspeed', 'deepspeed'],
  ['accelerate-launch', 'accelerate'],
  ['srun', 'srun'],
  ['mpirun', 'mpirun'],
  ['mpiexec', 'mpirun'],
]);
/** launchers that start their workers with RANK set: a process without it is none of the ranks */
const SETS_RANK = new Set<LauncherName>(['torchrun', 'deepspeed']);

const base = (w: string) => w.slice(w.lastIndexOf('/') + 1);

/** the launcher that the word at `i` starts, if any (a Python interpreter's module or script too) */
function launcherAt(argv: string[], i: number): LauncherName | undefined {
  const word = base(argv[i] ?? '');
  if (word === 'accelerate') return argv[i + 1] === 'launch' ? 'accelerate' : undefined;
  if (PROGRAMS.has(word)) return PROGRAMS.get(word);
  if (!PYTHON.test(word)) return undefined;
  let j = i + 1;
  // the interpreter's own options (`-u`, `-X dev`); `-m mod` (`-um mod`) names the module it runs
  while (j < argv.length && /^-[A-Za-z]/.test(argv[j]!) && !/^-[A-Za-z]*[mc]$/.test(argv[j]!))
    j += argv[j] === '-X' || argv[j] === '-W' ? 2 : 1;
  const opt = argv[j] ?? '';
  if (opt.endsWith('c') && opt.startsWith('-')) return undefined; // `-c code`
  if (opt.startsWith('-')) {
    const mod = argv[j + 1] ?? '';
    if (mod === 'accelerate.commands.accelerate_cli')
      return argv[j + 2] === 'launch' ? 'accelerate' : undefined;
    return MODULES.get(mod);
  }
  // a launcher's console script run by an explicit interpreter (`python3 /usr/bin/torchrun`)
  const script = base(opt);
  if (script === 'accelerate') return argv[j + 1] === 'launch' ? 'accelerate' : undefined;
  return script === 'srun' || script === 'mpirun' || script === 'mpiexec' ? undefined : PROGRAMS.get(script);
}

/**
 * The launchers a command starts, outermost first: `srun -N 2 torchrun …` is [srun, torchrun]
 * (srun's and mpirun's own options are passed over to the command they run). Leading `env` and
 * `NAME=value` words are passed over; a command that starts no launcher gives [].
 */
export function launchersInCommand(argv: readonly string[]): LauncherName[] {
  const words = [...argv];
  let i = 0;
  while (i < words.length && (base(words[i]!) === 'env' || /^[A-Za-z_]\w*=/.test(words[i]!))) i++;
  const out: LauncherName[] = [];
  while (i < words.length) {
    const l = launcherAt(words, i);
    if (l === undefined) break;
    out.push(l);
    if (l !== 'srun' && l !== 'mpirun') break; // the rest is the training script and its options
    // the command srun / mpirun runs: the first word that is a launcher or an interpreter
    let j = i + 1;
    while (j < words.length && launcherAt(words, j) === undefined && !PYTHON.test(base(words[j]!))) j++;
    i = j;
  }
  return out;
}

/** whether the command's launchers start every rank with RANK set (torchrun, DeepSpeed) */
export function launcherSetsRank(launchers: readonly LauncherName[]): boolean {
  return launchers.some((l) => SETS_RANK.has(l));
}
