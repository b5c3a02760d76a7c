import { LAUNCH_FILE } from '../ingest/launcher-files.js';
import type { ExecResult, Target } from '../targets/target.js';
import { parseJsonObject } from '../util/json-object.js';
import { shQuote } from '../util/sh-quote.js';
import type { DetachedMode } from './launch-spec.js';
import { launcherScript, type RunSpec } from './launcher.js';

/*
 * Detached runs survive the connection: a dropped link, a sleeping laptop or a killed nsa-dbg never
 * signals the trainer. With tmux on the box the run lives in its own tmux session (attaching shows
 * the real terminal, progress bars included); without it, setsid+nohup and a PTY that follows
 * stdout.log.
 */

/** how a detached run was started (its launch.json) */
export interface LaunchInfo {
  mode: DetachedMode;
  /** tmux session name when mode is tmux */
  session?: string;
}

export async function hasTmux(target: Target): Promise<boolean> {
  const r = await target.exec(['sh', '-c', 'command -v tmux >/dev/null 2>&1 && echo yes'], {
    timeoutMs: 10_000,
  });
  return r.stdout.trim() === 'yes';
}

export async function launchDetached(
  target: Target,
  spec: RunSpec,
  size: { cols: number; rows: number },
  prefer: DetachedMode | 'auto' = 'auto',
): Promise<LaunchInfo> {
  const mode: DetachedMode = prefer === 'auto' ? ((await hasTmux(target)) ? 'tmux' : 'nohup') : prefer;
  const script = `${spec.runDir}/run.sh`;
  await target.writeFile(script, launcherScript(spec, mode === 'tmux' ? 'tee' : 'file'));
  const info: LaunchInfo = mode === 'tmux' ? { mode, session: `nsa-dbg-${spec.runId}` } : { mode };
  await target.writeFile(`${spec.runDir}/${LAUNCH_FILE}`, `${JSON.stringify(info)}\n`);
  let r: ExecResult;
  if (mode === 'tmux') {
    r = await target.exec(
      [
        'tmux',
        'new-session',
        '-d',
        '-s',
        info.session!,
        '-x',
        String(size.cols),
        '-y',
        String(size.rows),
        `sh ${shQuote(script)}`,
      ],
      { timeoutMs: 15_000 },
    );
  } else {
    // setsid: no controlling terminal, so the hangup of our channel cannot reach the run
    const cmd = `if command -v setsid >/dev/null 2>&1; then S=setsid; else S=; fi; $S nohup sh ${shQuote(script)} </dev/null >/dev/null 2>&1 &`;
    r = await target.exec(['sh', '-c', cmd], { timeoutMs: 15_000 });
  }
  if (r.code !== 0)
    throw new Error(`could not start the run (${mode}): ${r.stderr.trim() || `exit ${r.code}`}`);
  return info;
}

/** what the PTY runs to show a detached run: the tmux session itself, or a follower of stdout.log */
export function followArgv(info: LaunchInfo, runDir: string): string[] {
  return info.mode === 'tmux' && info.session
    ? ['tmux', 'attach-session', '-t', info.session]
    : ['tail', '-n', '+1', '-F', `${runDir}/stdout.log`];
}

export async function readLaunchInfo(target: Target, runDir: string): Promise<LaunchInfo | null> {
  const b = await target.readFile(`${runDir}/${LAUNCH_FILE}`);
  const info = b === null ? null : parseJsonObject(b.toString('utf8'));
  return info?.mode === 'tmux' || info?.mode === 'nohup' ? (info as unknown as LaunchInfo) : null;
}
