import type { RunLayout } from '../ingest/run-files.js';
import type { DetectorSettings } from '../presets/preset.js';
import { shJoin, shQuote } from '../util/sh-quote.js';
import type { LaunchSpec, TorchrunRun } from './launch-spec.js';
import { runEnvironment } from './run-env.js';

/**
 * Every run, local or remote, lives in its own run directory:
 *
 *   command.json  what was run (argv, env, cwd, lane, how it was launched) — for `attach`, the
 *                 notebook and `analyze` (older files are migrated as they are read: spec-file.ts)
 *   run.sh        the POSIX-sh launcher below
 *   pid           the trainer's pid (written by the process itself just before it execs the trainer)
 *   exit_code     the trainer's exit status (128+N when killed by signal N)
 *   stdout.log    stdout+stderr, byte for byte
 *   …             the trainer's own artifacts when its out_dir is the run dir (the default)
 *
 * The pid is the trainer's own: `sh -c 'echo $$ > pid; exec "$@"'` replaces the shell with the
 * trainer, so SIGUSR1 reaches Python, not a wrapper shell.
 */

export interface RunSpec {
  runId: string;
  runDir: string;
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  lane: string;
  steps?: number;
  /** where the trainer writes heartbeats/dumps (defaults to runDir) */
  outDir: string;
  /** how outDir was found (src/runs/out-dir-of.ts), when it is not the run dir */
  outDirFrom?: { from: 'lane' | 'config' | 'flag'; config?: string };
  createdAt: string;
  demo?: boolean;
  /** the lane's detector settings: `analyze` of this run dir judges with them too */
  detector?: DetectorSettings;
  /** the lane's step regex, for trainers with other log formats */
  stepRegex?: string;
  /** how the run's folder is laid out, for its reader (src/ingest/run-files.ts); its kind's choice */
  layout?: RunLayout;
  /** the signal of nsa-dbg's stack hook in the ranks (default SIGUSR2, 12); 0: no hook */
  stackSignal?: number;
  /** how the run is launched: a PTY here, detached, a Slurm job, one agent per host (launch-spec.ts) */
  launcher: LaunchSpec;
  /** the command is a torchrun line (the lane's `launcher: torchrun`) */
  torchrun?: TorchrunRun;
}

export type OutputMode =
  /** output to the launching terminal (a PTY or a tmux pane) and to stdout.log */
  | 'tee'
  /** output only to stdout.log (setsid/nohup detached runs with no terminal to write to) */
  | 'file';

export function launcherScript(spec: RunSpec, mode: OutputMode = 'tee'): string {
  const d = shQuote(spec.runDir);
  const inner = `sh -c 'echo $$ > "$0/pid.tmp" && mv "$0/pid.tmp" "$0/pid"; exec "$@"' ${d} ${shJoin(spec.argv)}`;
  const status = `echo "$?" > ${d}/exit_code.tmp`;
  const done = `mv ${d}/exit_code.tmp ${d}/exit_code`;
  // exit_code is the end of the run for whoever follows the folder, so it appears only once
  // stdout.log holds all the output: through tee, after the pipeline (tee may still be copying the
  // trainer's last lines when the trainer has exited; on a loaded box a stop's traceback came late)
  const body =
    mode === 'tee'
      ? `{ ${inner}; ${status}; } 2>&1 | tee -a ${d}/stdout.log; ${done}`
      : `{ ${inner}; ${status} && ${done}; } >> ${d}/stdout.log 2>&1`;
  return [
    '#!/bin/sh',
    `# nsa-dbg run ${spec.runId} (lane ${spec.lane}). Re-run by hand with: sh run.sh`,
    ...runEnvironment(spec),
    body,
    '',
  ].join('\n');
}

/** Sortable, unique enough for one user: 20261122-031653-baseline-a1b2 */
export function newRunId(lane: string, now = new Date(), rand = Math.random): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const ts = `${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}`;
  const tag = Math.floor(rand() * 0xffff)
    .toString(16)
    .padStart(4, '0');
  return `${ts}-${lane.replace(/[^a-z0-9-]/gi, '')}-${tag}`;
}
