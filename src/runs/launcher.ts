import {
  EXIT_CODE_FILE,
  OUTPUT_HELD_FILE,
  PID_FILE,
  shWriteWhole,
  tmpNameOf,
} from '../ingest/launcher-files.js';
import type { RunLayout } from '../ingest/run-files.js';
import type { DetectorSettings } from '../lanes/lane.js';
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
 *   output_held   processes of the run that still had stdout.log open when the trainer ended
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

/**
 * `held`: one line `PID COMMAND` for each process of this run's session (its children, forked
 * workers) other than this shell and its display that still has stdout.log open. The session, so a
 * `tail -f` of the log in another terminal (or nsa-dbg's own follower) is not taken for the run's.
 */
const HELD_FN = [
  'held() {',
  '  seen=" "',
  '  for f in /proc/[0-9]*/fd/[0-9]*; do',
  '    [ "$f" -ef "$L" ] || continue',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
  '    p=${f#/proc/}; p=${p%%/*}',
  '    case "$seen" in *" $p "*) continue ;; esac',
  '    seen="$seen$p "',
  '    [ "$p" = "$$" ] || [ "$p" = "$T" ] && continue',
  `    [ "$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f4)" = "$sid" ] || continue`,
  `    printf '%s %s\\n' "$p" "$(tr '\\000' ' ' < "/proc/$p/cmdline" 2>/dev/null)"`,
  '  done 2>/dev/null',
  '}',
].join('\n');

/**
 * The trainer writes stdout.log itself (not through a pipe to tee): when it exits, every byte it
 * wrote is in the file, so exit_code can be written at once and still come after all of its output.
 * Through a pipe, a child that inherited it (a `subprocess.Popen` helper, a forked worker) kept tee
 * and so the run's end waiting for as long as the child lived.
 *
 * The run ends with the trainer; processes of its session that still hold the output are named in
 * output_held (written before exit_code, so whoever sees the end sees them too). The script then
 * stays while they hold it: its end would hang up its terminal (a PTY, a tmux pane) and with it
 * those children, whose output still goes to stdout.log.
 */
export function launcherScript(spec: RunSpec, mode: OutputMode = 'tee'): string {
  const d = shQuote(spec.runDir);
  const inner = `sh -c '${shWriteWhole('"$0"', PID_FILE, '$$')}; exec "$@"' ${d} ${shJoin(spec.argv)}`;
  const held = `${d}/${OUTPUT_HELD_FILE}`;
  const exitTmp = `${d}/${tmpNameOf(EXIT_CODE_FILE)}`;
  return [
    '#!/bin/sh',
    `# nsa-dbg run ${spec.runId} (lane ${spec.lane}). Re-run by hand with: sh run.sh`,
    ...runEnvironment(spec),
    `L=${d}/stdout.log; T=`,
    `sid=$(sed 's/.*) //' /proc/$$/stat 2>/dev/null | cut -d' ' -f4)`,
    HELD_FN,
    ': >> "$L"',
    // the terminal shows the output from where this run's begins (the display only: the log is the record)
    ...(mode === 'tee' ? ['tail -c +"$(($(wc -c < "$L") + 1))" -f "$L" & T=$!'] : []),
    `{ ${inner}; } >> "$L" 2>&1`,
    `echo "$?" > ${exitTmp}`,
    `held > ${held}.tmp; if [ -s ${held}.tmp ]; then mv ${held}.tmp ${held}; else rm -f ${held}.tmp; fi`,
    `mv ${exitTmp} ${d}/${EXIT_CODE_FILE}`,
    'while [ -n "$(held)" ]; do sleep 1; done',
    // a tail that polls (no inotify) shows the last lines within its second
    ...(mode === 'tee' ? ['sleep 1; kill "$T" 2>/dev/null'] : []),
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
