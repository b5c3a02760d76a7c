/**
 * What the user's keys do to the current run (`d` dump, `t` terminal, `K` cancel, `s` hot frames,
 * `q`'s words): each asks the run for the one thing it needs, and says why not when the run cannot.
 */
import type { StopPolicy } from '../lanes/lane.js';
import type { PtyHandle } from '../targets/target.js';
import { debugLog } from '../util/debug-log.js';
import type { LiveRun } from './live-run.js';

/** `d`: every rank named in the heartbeats asked at once; else the launch's own way */
export async function requestDump(live: LiveRun | null): Promise<string> {
  const run = live?.controller;
  if (!live || !run) return 'no run';
  live.checks?.dropFinishedHotFrames();
  // one request per rank pid from the heartbeats (never torchrun); else the process tree's handlers
  let msg = run.exited ? null : live.checks?.dumpEveryRank((m) => live.events.notice(m));
  if (!msg) {
    try {
      const ask = await run.requestDump();
      msg = ask.message;
      // signals went out to handlers that write a file: its arrival is said when it comes
      live.intake.awaitingDump = ask.sent;
      debugLog(`dump: ${msg}`);
    } catch (e) {
      msg = `dump failed: ${(e as Error).message}`;
    }
  }
  live.events.notice(msg);
  return msg;
}

/** `t`: the run's own terminal, or why there is none */
export async function openTerminal(
  live: LiveRun | null,
  cols: number,
  rows: number,
): Promise<{ pty: PtyHandle; release: () => void } | string> {
  const run = live?.controller;
  if (!run) return 'no run';
  if (run.exited) return 'the run has ended: its output is in the log pane';
  try {
    return await run.openTerminal({ cols, rows });
  } catch (e) {
    return `no terminal: ${(e as Error).message}`;
  }
}

/** `K`: what cancelling the run's launch would do (null: its launch has no cancel) */
export function cancelJobText(live: LiveRun | null): string | null {
  return live?.controller?.launch?.cancellable?.cancelText() ?? null;
}

/** `K` on a Slurm run: cancel its job; a cancelled run's verdict is `stopped` */
export async function cancelJob(live: LiveRun | null): Promise<string> {
  const c = live?.controller?.launch?.cancellable;
  if (!live || !c) return 'this run has no job to cancel (K cancels a Slurm job)';
  const r = await c.cancel();
  if (r.cancelled) {
    live.stopper.byUser = true;
    live.events.notice(r.message);
  }
  return r.message;
}

/** `s`: N stack samples 1.5 s apart, shown as a table of hot frames (kept with the evidence) */
export async function sampleHotFrames(live: LiveRun | null, count: number): Promise<string> {
  const run = live?.controller;
  if (!live?.checks || !run || run.exited) return 'no running trainer to sample';
  return live.checks.sampleHotFrames(count);
}

/** quitting leaves the run for `attach` (its kind says, and whether it was picked up here) */
export function leavesRunning(live: LiveRun | null): boolean {
  return live?.controller?.kind.leavesRunningOnQuit(live.attached) === true;
}

/** `q`'s words: what quitting does to the run */
export function quitConsequence(live: LiveRun | null, policy: StopPolicy, targetLabel: string): string {
  const run = live?.controller;
  if (!run || run.exited || !run.launch) return 'The run has ended; nothing is left running.';
  return run.launch.quitWords({ leave: leavesRunning(live), policy, targetLabel });
}
