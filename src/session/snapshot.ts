import type { AnalysisResult } from '../analysis/evidence.js';
import type { Preset } from '../presets/preset.js';
import type { RunController } from '../runs/run-controller.js';
import type { GpuUpdate } from './gpu-poller.js';
import type { LiveModel } from './live-model.js';
import { type DashboardState, emptyDashboardState, type RunPhase, type VerdictView } from './state.js';

/** Everything a snapshot is made of; the session owns these and hands them over read-only. */
export interface SnapshotInput {
  now: number;
  target: string;
  simulated: boolean;
  preset: Preset;
  run: RunController | null;
  phase: RunPhase;
  startedAt: number | null;
  model: LiveModel;
  gpu: GpuUpdate;
  notice: string | null;
  connection: { state: 'up' | 'down' | 'reconnecting'; since: number; attempts: number } | undefined;
  /** the verdict of the run once it has exited and every file was drained */
  result: AnalysisResult | null;
}

/**
 * Live: a stall the detector declares is a hang now, before the run ends; after the end the same
 * Evidence engine as `nsa-dbg analyze` gives the verdict.
 */
function verdictView(i: SnapshotInput): VerdictView | null {
  if (i.phase === 'exited' && i.result) {
    return {
      verdict: i.result.verdict,
      summary: i.result.summary ?? `${i.result.verdict}, ${i.result.stepsReached} steps`,
    };
  }
  const stalls = i.model.detector.stalls(i.model.trainerNowS(i.now));
  if (stalls.length) {
    const s = stalls[0]!;
    return { verdict: 'hang', summary: `hang at step ${s.step} (${s.where}), rank ${s.rank}` };
  }
  return i.phase === 'running'
    ? { verdict: 'running', summary: `no stall seen, step ${i.model.step}` }
    : null;
}

/** The immutable state the UI renders (the log is capped: the pane shows a window of the tail). */
export function buildSnapshot(i: SnapshotInput): DashboardState {
  const m = i.model;
  const { loss, toks } = m.series();
  return emptyDashboardState({
    target: i.target,
    simulated: i.simulated,
    lane: i.preset.name,
    laneDescription: i.preset.description,
    runId: i.run?.spec.runId ?? null,
    runState: i.phase,
    startedAt: i.startedAt,
    now: i.now,
    step: m.step,
    totalSteps: i.run?.spec.steps,
    pid: i.run?.pid,
    exitCode: i.run?.exitCode,
    loss,
    toks,
    ranks: m.ranks(i.now),
    gpu: {
      ...i.gpu,
      simulated: i.simulated,
      vramLimitMiB: i.preset.acceptance.vramLimitMiB,
      torchAllocMiB: m.torchAllocMiB,
      torchReservedMiB: m.torchReservedMiB,
      peakReservedMiB: m.peakReservedMiB,
    },
    log: { lines: m.logLines.slice(-2000), total: m.logTotal },
    dump: m.dump,
    verdict: verdictView(i),
    notice: i.notice,
    connection: i.connection && {
      state: i.connection.state,
      attempts: i.connection.attempts,
      outageS: i.connection.state === 'up' ? undefined : (i.now - i.connection.since) / 1000,
    },
  });
}
