import type { SeriesPoint } from '../analysis/chart-series.js';
import type { DumpView } from '../analysis/dump-view.js';
/**
 * The live state object the UI reads. The engine (src/session/session.ts) owns it and publishes an
 * immutable snapshot at most every 50 ms; panels in `panels/` are pure views of it.
 */
import type { ManyRanks } from '../analysis/rank-table.js';
import type { Verdict } from '../analysis/signatures.js';
import type { RankStatus, StallWhere } from '../analysis/stall-detector.js';
import type { SilenceState } from '../analysis/stall-judge.js';
import type { Frame } from '../ingest/events.js';
import type { Lane } from '../lanes/lane.js';
import type { PtyHandle } from '../targets/target.js';
import type { GpuUpdate } from './gpu-poller.js';

export type RunPhase = 'idle' | 'starting' | 'running' | 'stopping' | 'exited';

export type { DumpView, SeriesPoint };

/** A silent rank as the banner shows it: suspect while it is checked, then busy, stuck or blocked. */
export interface StallView {
  step: number;
  where: StallWhere;
  silenceS: number;
  cpuBusy: boolean | null;
  /** checking | busy | stuck | blocked-native; absent when nothing is checked (silence decides) */
  state?: SilenceState;
  /** confirmed: a hang */
  hang: boolean;
  /** one line: what the facts say */
  why?: string;
}

export interface RankView extends Omit<RankStatus, 'stall'> {
  stall: StallView | null;
}

export interface GpuView extends GpuUpdate {
  /** demo mode: numbers come from the simulated nvidia-smi shim */
  simulated: boolean;
  /** the lane's acceptance limit, if any */
  vramLimitMiB?: number;
  /** torch's own view, from the newest heartbeat */
  torchAllocMiB?: number;
  torchReservedMiB?: number;
  peakReservedMiB?: number;
}

export interface LogLine {
  /** monotonically increasing line number since the run started (stable React key) */
  id: number;
  /** escape-stripped text, at most LOG_LINE_CHARS of it (src/session/log-line.ts) */
  text: string;
  /** bytes of the trainer's line not in `text` (it was cut); the evidence file has them all */
  cutBytes?: number;
}

/**
 * The `s` sampling: one row per function the innermost user frame was in (count, share, and the
 * lines within it, hottest first), and the hottest full stack.
 */
export interface HotFramesView {
  running: boolean;
  taken: number;
  of: number;
  /** samples that got no dump (main thread outside Python) */
  unanswered: number;
  rows: Array<Frame & { count: number; share: number; lines: Array<{ line: number; count: number }> }>;
  /** innermost first */
  hottestStack: Frame[];
}

export interface VerdictView {
  /** after the end, the run's verdict; live, what the evidence says so far */
  verdict: Verdict | 'running' | 'suspect' | 'busy';
  /** one line, e.g. "hang at step 6 (in-step), rank 0" */
  summary: string;
  /** after the end: the lane's GO/NO-GO (analysis/acceptance.ts) and why not */
  go?: boolean;
  reasons?: string[];
}

export interface DashboardState {
  /** "local" or "user@host" */
  target: string;
  /** the trainer is the bundled demo, not a real run */
  simulated: boolean;
  lane: string;
  laneDescription: string;
  runId: string | null;
  runState: RunPhase;
  /** epoch ms */
  startedAt: number | null;
  /** epoch ms when the run ended (the header's clock stops there) */
  endedAt?: number | null;
  /** epoch ms of this snapshot (the UI never reads the clock itself) */
  now: number;
  step: number;
  /** the last step that finished (step lines / progress beats); `step` may be the one in progress */
  stepsDone?: number;
  totalSteps?: number;
  pid?: number;
  exitCode?: number | null;
  /** the charts' points, decimated on long runs; `lossTotal`/`toksTotal`: steps seen in all */
  loss: SeriesPoint[];
  toks: SeriesPoint[];
  lossTotal?: number;
  toksTotal?: number;
  /** what the rate chart shows: toks/s, or the step time where the trainer prints no toks/s */
  rateLabel?: 'toks/s' | 'ms/step';
  ranks: RankView[];
  /** more than one rank: the per-rank table, the root-cause rank and the stack diff */
  many?: ManyRanks | null;
  gpu: GpuView;
  /** the tail of the output, newest last; at most a few thousand lines are kept */
  log: { lines: LogLine[]; total: number };
  dump: DumpView | null;
  hotFrames: HotFramesView | null;
  verdict: VerdictView | null;
  /** a transient message for the status line ("SIGUSR1 sent to pid 4162") */
  notice: string | null;
  /**
   * the stop ladder's countdown while the run is being stopped ("stopping: wrote .HALT 3 s ago;
   * SIGINT in 12 s (q again: kill now)"), for views that show it beside other notices (the notebook)
   */
  stopping?: string | null;
  connection?: { state: 'up' | 'down' | 'reconnecting'; outageS?: number; attempts?: number };
  /**
   * what the run's launch says of itself, in the header in place of the pid: a Slurm job's
   * `job 41 PENDING (Resources)`, a `--hosts` run's agents; null when the pid says enough
   */
  launchLine?: string | null;
  /** which step lines are read: "mingpt, every 10 from 0", "learned: iter #: loss #" */
  stepFormat?: string | null;
}

/** a lane as the picker lists it (`env`: the env the lane sets, for its detail line) */
export type LaneSummary = Pick<Lane, 'name' | 'description' | 'env'>;

/** What the UI may ask of the engine. Implemented by src/session/session.ts. */
export interface SessionController {
  getState(): DashboardState;
  /** called with each new snapshot (≤ 1 Hz, see session.ts); returns an unsubscribe function */
  subscribe(cb: (s: DashboardState) => void): () => void;
  lanes(): LaneSummary[];
  /** SIGUSR1 to the trainer after a SigCgt check; resolves to a one-line outcome for the status line */
  requestDump(): Promise<string>;
  /** `s`: take stack samples of every rank and show where the time goes */
  sampleHotFrames(): Promise<string>;
  /** during the stop ladder: SIGKILL the trainer's tree now */
  killNow(): Promise<void>;
  /** stop the current run by the lane's stop policy, then start `lane` */
  switchLane(lane: string): Promise<void>;
  /**
   * The run's own terminal for a hand-over: a fresh `tmux attach` for detached runs, the launcher's
   * PTY for local ones. `release` gives it back (closing only what was opened for the hand-over).
   * A string says why there is none.
   */
  openTerminal(cols: number, rows: number): Promise<{ pty: PtyHandle; release: () => void } | string>;
  /** what quitting does to the run, for the confirm prompt */
  quitConsequence(): string;
  /** `q` asks first (default); a notebook cell's dashboard goes straight back instead */
  quitAsks?(): boolean;
  /** why `l` cannot switch the lane here (a notebook cell keeps its lane), or null */
  laneLocked?(): string | null;
  /** stop (local) or leave running (detached remote) per quitConsequence, then resolve */
  quit(): Promise<void>;
  /** what `K` would do to the run's launch (a Slurm job: scancel); null: it has nothing to cancel */
  cancelJobText?(): string | null;
  /** `K`, confirmed: cancel the launch; resolves with the line for the status bar */
  cancelJob?(): Promise<string>;
}

export function emptyDashboardState(partial: Partial<DashboardState> = {}): DashboardState {
  return {
    target: 'local',
    simulated: false,
    lane: '',
    laneDescription: '',
    runId: null,
    runState: 'idle',
    startedAt: null,
    now: Date.now(),
    step: 0,
    loss: [],
    toks: [],
    ranks: [],
    gpu: { available: false, simulated: false, gpus: [], processes: [], message: 'no GPU data yet' },
    log: { lines: [], total: 0 },
    dump: null,
    hotFrames: null,
    verdict: null,
    notice: null,
    ...partial,
  };
}
