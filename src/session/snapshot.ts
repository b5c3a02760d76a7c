import { judge } from '../analysis/acceptance.js';
import type { AnalysisResult } from '../analysis/evidence.js';
import { type ManyRanks, manyRanksOf } from '../analysis/rank-table.js';
import { stepFormatText } from '../analysis/step-cadence.js';
import type { Lane } from '../lanes/lane.js';
import type { RunController } from '../runs/run-controller.js';
import type { GpuUpdate } from './gpu-poller.js';
import type { LiveModel } from './live-model.js';
import type { LinkView } from './session-options.js';
import {
  type DashboardState,
  emptyDashboardState,
  type HotFramesView,
  type RankView,
  type RunPhase,
  type VerdictView,
} from './state.js';

/** Everything a snapshot is made of; the session owns these and hands them over read-only. */
export interface SnapshotInput {
  now: number;
  target: string;
  simulated: boolean;
  lane: Lane;
  run: RunController | null;
  phase: RunPhase;
  startedAt: number | null;
  endedAt: number | null;
  model: LiveModel;
  gpu: GpuUpdate;
  notice: string | null;
  /** the stop ladder's countdown, while it runs */
  stopping?: string | null;
  connection: LinkView | undefined;
  /** the verdict of the run once it has exited and every file was drained */
  result: AnalysisResult | null;
  hotFrames: HotFramesView | null;
  /**
   * the previous snapshot, when the model has not changed since it was built: its charts, log and
   * dump are reused as they are (an idle run's 1 Hz clock frame then allocates almost nothing, and
   * the panels that show them are skipped by React)
   */
  unchanged?: DashboardState | null;
}

/**
 * Live: silence past the threshold is a suspicion while the rank is checked on the box; a hang once
 * the evidence confirms it (stuck or blocked-native). After the end, the verdict of the same Evidence
 * that `nsa-dbg analyze` reads.
 */
function verdictView(i: SnapshotInput): VerdictView | null {
  if (i.phase === 'exited' && i.result) {
    // one GO rule for the dashboard, headless, the notebook and the report: the lane's acceptance
    const { go, reasons } = judge(i.result, i.lane.acceptance, i.run?.spec.steps);
    return { verdict: i.result.verdict, summary: i.result.summary, go, reasons };
  }
  const silences = i.model.silences(i.now);
  // the verdict's rule: on many ranks the rank the others wait for, so header and ROOT CAUSE agree
  const hang = i.model.confirmedStall(i.now) ?? undefined;
  const at = (c: (typeof silences)[number]) => `step ${c.step} (${c.where}), rank ${c.rank}`;
  if (hang !== undefined) {
    const how = hang.judgement ? ` — ${hang.judgement.state}: ${hang.judgement.why}` : '';
    return { verdict: 'hang', summary: `hang at ${at(hang)}${how}` };
  }
  const first = silences[0];
  if (first !== undefined) {
    const j = first.judgement;
    if (j?.state === 'busy') return { verdict: 'busy', summary: `${j.why} — ${at(first)}, still running` };
    return {
      verdict: 'suspect',
      summary: `suspect: silent ${Math.round(first.silenceS)} s at ${at(first)}; checking — ${j?.why ?? ''}`,
    };
  }
  if (i.phase !== 'running') return null;
  // a hang that recovered stays in the banner's history: the run was hung, and is going again
  const recovered = i.model.recoveredLine();
  return {
    verdict: 'running',
    summary: recovered
      ? `step ${i.model.digest.step}; ${recovered}`
      : `no stall seen, step ${i.model.digest.step}`,
  };
}

/** many ranks: live, the current silence's culprit; after the end, the verdict's root cause */
function manyRanksView(i: SnapshotInput, ranks: RankView[]): ManyRanks | null {
  if (ranks.length < 2) return null;
  if (i.phase === 'exited' && i.result) return manyRanksOf(i.model.evidence.rankRows(ranks), i.result);
  return i.model.manyRanks(i.now, ranks);
}

/** The immutable state the UI renders (the log is capped: the pane shows a window of the tail). */
export function buildSnapshot(i: SnapshotInput): DashboardState {
  const m = i.model;
  const same = i.unchanged;
  // the previous snapshot's charts were chartSeries() too
  const { loss, toks, lossTotal, toksTotal, rateLabel } = same ?? m.digest.chartSeries();
  const ranks = m.ranks(i.now);
  return emptyDashboardState({
    target: i.target,
    simulated: i.simulated,
    lane: i.lane.name,
    laneDescription: i.lane.description,
    runId: i.run?.spec.runId ?? null,
    runState: i.phase,
    startedAt: i.startedAt,
    endedAt: i.endedAt,
    now: i.now,
    step: m.digest.step,
    stepsDone: m.digest.done,
    totalSteps: i.run?.spec.steps,
    pid: i.run?.pid,
    exitCode: i.run?.exitCode,
    loss,
    toks,
    lossTotal,
    toksTotal,
    rateLabel,
    // after the run, ages and expectations mean nothing ("exp 0.0s" of a finished run)
    ranks:
      i.phase === 'exited'
        ? ranks.map((r) => ({ ...r, lastBeatAgeS: null, expectedS: null, thresholdS: null, stall: null }))
        : ranks,
    many: manyRanksView(i, ranks),
    gpu: {
      ...i.gpu,
      simulated: i.simulated,
      vramLimitMiB: i.lane.acceptance.vramLimitMiB,
      torchAllocMiB: m.torchAllocMiB,
      torchReservedMiB: m.torchReservedMiB,
      peakReservedMiB: m.peakReservedMiB,
    },
    log: same ? same.log : { lines: m.log.tail(2000), total: m.log.total },
    dump: same ? same.dump : m.digest.newestDump,
    hotFrames: i.hotFrames,
    verdict: verdictView(i),
    notice: i.notice,
    stopping: i.stopping ?? null,
    connection: i.connection && {
      state: i.connection.state,
      attempts: i.connection.attempts,
      outageS: i.connection.state === 'up' ? undefined : (i.now - i.connection.since) / 1000,
    },
    launchLine: i.run?.launch?.line() ?? null,
    stepFormat: stepFormatText(m.evidence.stepFormat()),
  });
}
