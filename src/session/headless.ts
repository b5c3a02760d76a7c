import { type AcceptanceOutcome, judge } from '../analysis/acceptance.js';
import type { AnalysisResult } from '../analysis/evidence.js';
import type { Session } from './session.js';

export interface HeadlessOutcome {
  result: AnalysisResult & {
    runDir: string;
    localDir: string;
    lane: string;
    go: boolean;
    reasons: string[];
    /** the step target and how the run is known to have reached it */
    target?: AcceptanceOutcome['target'];
  };
  exitCode: 0 | 1;
}

/**
 * Run to the end without a UI. It reacts to the run's evidence, never to a view: when the evidence
 * confirms a hang (the silent rank was checked on the box and found stuck or blocked), the stacks
 * are already with the evidence, and the run is stopped at once by SIGINT, then SIGKILL (a hung
 * step never polls .HALT). A slow but alive run is left to finish.
 */
export async function runHeadless(
  session: Session,
  opts: {
    onProgress?: (line: string) => void;
    /** leave the session open after the verdict (a notebook whose dashboard may still show it disposes it) */
    keepOpen?: boolean;
  } = {},
): Promise<HeadlessOutcome> {
  // The session's timers and followers are unref'd (a TUI must be able to exit), and waiting on a
  // promise holds nothing: without this, node leaves the moment the launcher's PTY closes, before
  // the exit is seen, printing nothing with status 0.
  const keepAlive = setInterval(() => {}, 60_000);
  // ended by a signal (a scheduler's timeout, a Ctrl+C, `kill`): the run is stopped by the lane's
  // ladder and what was known is still reported, verdict `stopped`; a second signal kills it now
  let signalled = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) {
      void session.killNow();
      return;
    }
    signalled = true;
    opts.onProgress?.(`${sig}: stopping the run (again to kill it now)`);
    void session.stopByUser();
  };
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
  for (const s of signals) process.on(s, onSignal);
  try {
    await session.start();
    const run = session.currentRun();
    if (!run) throw new Error('the run did not start');
    const stall = await Promise.race([run.waitForExit().then(() => null), session.stallConfirmed()]);
    if (stall !== null && !run.exited) {
      const how = stall.judgement ? `${stall.judgement.state}: ${stall.judgement.why}` : 'silence';
      opts.onProgress?.(`hang confirmed: rank ${stall.rank} step ${stall.step} (${stall.where}), ${how}`);
      await session.stopForEvidence();
    }
    // the verdict once the run has exited and every file was drained
    const r = await session.finalResult();
    const lane = session.currentLane();
    const verdict = judge(r, lane.acceptance, run.spec.steps);
    if (!opts.keepOpen) await session.dispose();
    return {
      result: {
        ...r,
        lane: lane.name,
        runDir: run.spec.runDir,
        localDir: session.localDirOf(run.spec),
        go: verdict.go,
        reasons: verdict.reasons,
        ...(verdict.target === undefined ? {} : { target: verdict.target }),
      },
      exitCode: verdict.go ? 0 : 1,
    };
  } finally {
    clearInterval(keepAlive);
    for (const s of signals) process.off(s, onSignal);
  }
}
