import type { AnalysisResult } from '../analysis/evidence.js';
import type { CurrentSilence } from '../analysis/silences.js';
import type { Lane } from '../lanes/lane.js';
import { getLane } from '../lanes/load.js';
import type { RunSpec } from '../runs/launcher.js';
import type { RunController } from '../runs/run-controller.js';
import { CommandNotFound, ScriptNotFound } from '../targets/find-command.js';
import type { PtyHandle } from '../targets/target.js';
import { NO_GPU } from './gpu-poller.js';
import { LiveModel } from './live-model.js';
import { type LaneHolder, LiveRun } from './live-run.js';
import type { RankStart } from './process-env.js';
import { SnapshotPublisher } from './publisher.js';
import * as keys from './run-keys.js';
import type { LinkView, SessionOptions } from './session-options.js';
import { SessionTimers } from './session-timers.js';
import { buildSnapshot } from './snapshot.js';
import type { DashboardState, LaneSummary, SessionController } from './state.js';

/**
 * New data reaches the screen at most once a second, with the clock (htop refreshes every 1.5 s):
 * a trainer printing thousands of lines a second would otherwise cost a full re-render (~10 ms,
 * most of it Ink measuring the braille charts) and a screenful of changed cells 20 times a second.
 * Keys are drawn at once: they change the UI's own state, not the snapshot.
 */
const PUBLISH_MS = 1000;
/**
 * Past this many ranks new data reaches the screen every other tick (2 s, k9s's default): a frame
 * of 512 ranks costs ~10 ms to build and draw and as much again in garbage, a point of a core at
 * 1 s. Its rows are per node; a notice (the answer to a key) still goes out on the next tick.
 */
const MANY_RANKS = 256;

/**
 * The live engine behind the TUI: the lane, the current run (a LiveRun: everything of one run,
 * disposed as one when the lane switches), the SSH link's state, and the immutable DashboardState
 * snapshots published at a bounded rate. Plain TypeScript; the UI only subscribes and calls the
 * SessionController methods.
 */
export class Session implements SessionController {
  private live: LiveRun | null = null;
  /** the lane; an attached run brings its own when this machine knows it */
  private readonly lane: LaneHolder;
  /** before the first run: an empty model for the first snapshot */
  private readonly idleModel = new LiveModel();
  private readonly timers: SessionTimers;
  private connection: LinkView | undefined;
  private attachPending: string | undefined;
  /** the model (and its version) the current snapshot was built from */
  private builtFrom: { model: LiveModel | null; version: number; state: DashboardState | null } = {
    model: null,
    version: -1,
    state: null,
  };
  private readonly pub: SnapshotPublisher<DashboardState>;

  constructor(private readonly o: SessionOptions) {
    this.lane = { lane: getLane(o.lanes, o.lane) };
    this.attachPending = o.attachRunDir;
    this.pub = new SnapshotPublisher((now) => this.build(now));
    this.timers = new SessionTimers({
      publishMs: o.publishMs ?? PUBLISH_MS,
      tick: () => {
        this.live?.tick(Date.now());
        this.pub.markDirty();
      },
      publish: () => this.pub.publishOnTick(this.pub.current().ranks.length > MANY_RANKS ? 2 : 1),
      probeBusy: () => this.live?.probeBusy(Date.now()) === true,
      probe: () => this.live?.probe(),
    });
  }

  async start(): Promise<void> {
    this.timers.start();
    try {
      await this.startRun();
    } catch (e) {
      // nothing was started: the session ends here (its timers too), and the caller says why
      if (e instanceof CommandNotFound || e instanceof ScriptNotFound) await this.dispose();
      throw e;
    }
  }

  private async startRun(): Promise<void> {
    await this.live?.dispose();
    // a run replaced by the next lane's says nothing more
    const live: LiveRun = new LiveRun(this.o, this.lane, {
      changed: () => {
        if (this.live === live) this.pub.markDirty();
      },
      notice: (text) => {
        if (this.live === live) this.pub.setNotice(text);
      },
      dumpArrived: (name) => {
        if (this.live === live) this.pub.setNotice(`stack dump: ${name}`);
      },
    });
    this.live = live;
    this.pub.markDirty();
    const attach = this.attachPending;
    this.attachPending = undefined;
    await live.begin(attach);
  }

  /** link state from the SSH connection, shown as an outage in the header */
  setConnection(c: LinkView): void {
    this.connection = c;
    this.pub.markDirty();
  }

  /** resolves when the current run's silence is confirmed as a hang (never, if it is not) */
  stallConfirmed(): Promise<CurrentSilence> {
    return this.live?.stallConfirmed() ?? new Promise<CurrentSilence>(() => undefined);
  }

  private build(now: number): DashboardState {
    const live = this.live;
    const model = live?.model ?? this.idleModel;
    const version = model.version;
    const b = this.builtFrom;
    const unchanged = b.model === model && b.version === version ? b.state : null;
    const state = buildSnapshot({
      unchanged,
      now,
      target: this.o.target.label,
      simulated: this.o.simulated,
      lane: this.lane.lane,
      run: live?.controller ?? null,
      phase: live?.phase ?? 'idle',
      startedAt: live?.startedAt ?? null,
      endedAt: live?.endedAt ?? null,
      model,
      gpu: live?.gpu ?? NO_GPU,
      notice: this.pub ? this.pub.notice(now) : null,
      stopping: live?.stopper.text(now) ?? null,
      connection: this.connection,
      result: live?.result ?? null,
      hotFrames: live?.checks?.hotFrames() ?? null,
    });
    this.builtFrom = { model, version, state };
    return state;
  }

  getState(): DashboardState {
    return this.pub.get();
  }

  subscribe(cb: (s: DashboardState) => void): () => void {
    return this.pub.subscribe(cb);
  }

  lanes(): LaneSummary[] {
    return [...this.o.lanes.values()]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((p) => ({ name: p.name, description: p.description, env: p.env }));
  }

  requestDump(): Promise<string> {
    return keys.requestDump(this.live);
  }

  async switchLane(lane: string): Promise<void> {
    const next = getLane(this.o.lanes, lane);
    await this.live?.stop(true);
    this.lane.lane = next;
    this.pub.setNotice(`lane ${lane}: starting`);
    await this.startRun();
    // callers that read getState() right after the switch see the new lane, not the last tick's
    this.pub.publishIfDirty();
  }

  openTerminal(cols: number, rows: number): Promise<{ pty: PtyHandle; release: () => void } | string> {
    return keys.openTerminal(this.live, cols, rows);
  }

  /** `K`: what cancelling the run's launch would do (null: its launch has no cancel) */
  cancelJobText(): string | null {
    return keys.cancelJobText(this.live);
  }

  cancelJob(): Promise<string> {
    return keys.cancelJob(this.live);
  }

  quitConsequence(): string {
    return keys.quitConsequence(this.live, this.lane.lane.stop, this.o.target.label);
  }

  /** a second `q` while the stop ladder runs: SIGKILL the trainer's whole tree now */
  async killNow(): Promise<void> {
    await this.live?.killNow();
  }

  /** `s`: N stack samples 1.5 s apart, shown as a table of hot frames (kept with the evidence) */
  sampleHotFrames(count = 10): Promise<string> {
    return keys.sampleHotFrames(this.live, count);
  }

  async quit(): Promise<void> {
    if (!keys.leavesRunning(this.live)) await this.live?.stop(true);
    await this.dispose();
  }

  async dispose(): Promise<void> {
    this.timers.stop();
    await this.live?.dispose();
  }

  /** headless ended by a signal: stop the run as a user's stop (verdict `stopped`) */
  async stopByUser(): Promise<void> {
    await this.live?.stop(true);
  }

  /**
   * headless: stop after a confirmed stall, keeping the stall in the verdict. Straight to SIGINT:
   * the hang was confirmed, and a hung step never polls .HALT (what the evidence says by the time
   * the stop comes, after the stacks were gathered, does not undo the decision)
   */
  async stopForEvidence(): Promise<void> {
    await this.live?.stop(false, { skipHalt: true });
  }

  /** the verdict once the run has exited and every file was drained */
  async finalResult(): Promise<AnalysisResult> {
    if (!this.live) throw new Error('no run');
    return this.live.finalResult();
  }

  currentLane(): Lane {
    return this.lane.lane;
  }

  /** the current run's ranks as their processes started (env and argv as the kernel holds them) */
  processStarts(): Promise<RankStart[]> {
    return this.live?.processStarts() ?? Promise.resolve([]);
  }

  /** for the CLI/tests: the run in progress */
  currentRun(): RunController | null {
    return this.live?.controller ?? null;
  }

  /** where a run's evidence is on this machine: its run dir, or a remote run's mirror */
  localDirOf(spec: RunSpec): string {
    return this.o.localDir?.(spec) ?? spec.runDir;
  }
}
