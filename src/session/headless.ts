import { judge } from '../analysis/acceptance.js';
import type { AnalysisResult } from '../analysis/evidence.js';
import type { Session } from './session.js';

export interface HeadlessOutcome {
  result: AnalysisResult & { runDir: string; localDir: string; lane: string; go: boolean; reasons: string[] };
  exitCode: 0 | 1;
}

/**
 * Run to the end without a UI. When the detector confirms a stall, take the evidence a person would
 * (a SIGUSR1 stack dump, if the trainer has a handler), then stop the run by the lane's policy.
 */
export async function runHeadless(
  session: Session,
  opts: {
    localDir: (runDir: string, runId: string) => string;
    dumpWaitMs?: number;
    onProgress?: (line: string) => void;
  } = { localDir: (d) => d },
): Promise<HeadlessOutcome> {
  await session.start();
  const run = session.currentRun();
  if (!run) throw new Error('the run did not start');
  let tookEvidence = false;
  for (;;) {
    if (run.exited) break;
    const st = session.getState();
    const stall = st.ranks.find((r) => r.stall);
    if (stall && !tookEvidence) {
      tookEvidence = true;
      opts.onProgress?.(
        `stall confirmed: rank ${stall.rank} step ${stall.stall!.step} (${stall.stall!.where})`,
      );
      const before = st.dump?.file;
      opts.onProgress?.(await session.requestDump());
      const deadline = Date.now() + (opts.dumpWaitMs ?? 3000);
      while (Date.now() < deadline && session.getState().dump?.file === before) await sleep(100);
      await session.stopForEvidence();
      break;
    }
    await sleep(200);
  }
  await run.waitForExit();
  const r = await session.finalResult();
  const preset = session.currentPreset();
  const verdict = judge(r, preset.acceptance, run.spec.steps);
  await session.dispose();
  return {
    result: {
      ...r,
      lane: preset.name,
      runDir: run.spec.runDir,
      localDir: opts.localDir(run.spec.runDir, run.spec.runId),
      go: verdict.go,
      reasons: verdict.reasons,
    },
    exitCode: verdict.go ? 0 : 1,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
