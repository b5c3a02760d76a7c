/**
 * The environment every launcher gives a run (the local and detached run.sh, a Slurm job's script,
 * each host's script): unbuffered Python, where the evidence goes, the lane's env, and nsa-dbg's
 * stack hook first on PYTHONPATH (src/stacks/sitecustomize.py, copied into the run dir), so every
 * rank's Python process can be asked for its stacks at once, whatever it is doing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Target } from '../targets/target.js';
import { packageRoot } from '../util/package-root.js';
import { shExports, shQuote } from '../util/sh-quote.js';
import type { RunSpec } from './launcher.js';
import { launcherStartsRanks } from './run-launcher.js';

/** where the run dir keeps the stack hook (on PYTHONPATH of the run) */
export const STACK_HOOK_DIR = '.nsa-dbg-py';
/** SIGUSR2: nsa-dbg's own; SIGUSR1 stays the trainer's */
export const DEFAULT_STACK_SIGNAL = 12;

/** the signal of the run's stack hook; 0: off */
export function stackSignalOf(spec: Pick<RunSpec, 'stackSignal'>): number {
  return spec.stackSignal ?? DEFAULT_STACK_SIGNAL;
}

/** the shell lines that start a run's script: `cd` to its cwd, then its environment */
export function runEnvironment(spec: RunSpec): string[] {
  const signal = stackSignalOf(spec);
  const hook =
    signal === 0
      ? []
      : [
          shExports({
            NSA_DBG_STACK_DIR: spec.runDir,
            NSA_DBG_STACK_SIGNAL: String(signal),
            NSA_DBG_STACK_WORKERS: launcherStartsRanks(spec) ? '1' : '0',
          }),
          // first on the path, before the lane's own entries (the hook runs any sitecustomize after it)
          `export PYTHONPATH=${shQuote(`${spec.runDir}/${STACK_HOOK_DIR}`)}\${PYTHONPATH:+:$PYTHONPATH}`,
        ];
  return [
    `cd ${shQuote(spec.cwd)} || { echo "nsa-dbg: cannot cd to ${spec.cwd.replace(/[^\w./-]/g, '?')}" >&2; exit 97; }`,
    // Output goes through a pipe (tee, a file), so Python must not block-buffer it.
    'export PYTHONUNBUFFERED=1',
    // where the run's evidence belongs, for trainers that take their out dir from the env
    shExports({ NSA_DBG_RUN_DIR: spec.runDir, NSA_DBG_OUT_DIR: spec.outDir }),
    shExports(spec.env),
    ...hook,
  ];
}

let hookSource: string | null = null;

/** copy the stack hook into a run dir on its target (before the launch) */
export async function installStackHook(target: Target, spec: RunSpec): Promise<void> {
  if (stackSignalOf(spec) === 0) return;
  hookSource ??= readFileSync(join(packageRoot(), 'src', 'stacks', 'sitecustomize.py'), 'utf8');
  await target.writeFile(`${spec.runDir}/${STACK_HOOK_DIR}/sitecustomize.py`, hookSource);
}
