/**
 * One run as the session follows it, from its start (or attach) to its verdict: the run's
 * controller, its evidence model and arrival clock, the checks on the box, the GPU poller, the
 * out_dir watch, the failure grace and the stop ladder. Everything that belongs to one run is here
 * and is disposed together, so a new lane's run starts from nothing. The session is told what
 * happens through typed events, never text to match.
 */
import type { AnalysisResult } from '../analysis/evidence.js';
import { isOutputHolderNote } from '../analysis/evidence-facts.js';
import type { CurrentSilence } from '../analysis/silences.js';
import type { Lane } from '../lanes/lane.js';
import { getLane } from '../lanes/load.js';
import { kindOf } from '../launch/kinds.js';
import { replayRun } from '../launch/replay.js';
import { attachRun, newRun } from '../launch/run.js';
import { buildRunSpec } from '../runs/build-spec.js';
import { traceFlightRecorder } from '../runs/flight-recorder-trace.js';
import type { RunSpec } from '../runs/launcher.js';
import type { RunController } from '../runs/run-controller.js';
import { debugLog } from '../util/debug-log.js';
import { FailureGrace } from './failure-grace.js';
import { type GpuPoller, type GpuUpdate, NO_GPU, pollGpuInto } from './gpu-poller.js';
import type { LiveModel } from './live-model.js';
import { withOutDir } from './out-dir-watch.js';
import { ProcessEnvWatch, type RankStart } from './process-env.js';
import { RunChecks } from './run-checks.js';
import { RunIntake } from './run-intake.js';
import { RunStop } from './run-stop.js';
import type { SessionOptions } from './session-options.js';
import type { RunPhase } from './state.js';

/** what a run tells its session */
export interface LiveRunEvents {
  /** anything shown changed */
  changed(): void;
  /** a line for the status line */
  notice(text: string): void;
  /** a dump file answered the user's request for one */
  dumpArrived(name: string): void;
}

/** the lane of the run; an attached run brings its own lane when this machine knows it */
export interface LaneHolder {
  lane: Lane;
}

export class LiveRun {
  controller: RunController | null = null;
  /** the run's files into its evidence model */
  readonly intake: RunIntake;
  phase: RunPhase = 'starting';
  startedAt = Date.now();
  endedAt: number | null = null;
  /** picked up again, not started here: its times come from its folder */
  attached = false;
  gpu: GpuUpdate = NO_GPU;
  result: AnalysisResult | null = null;
  /** the stop ladder, and whether the stop was the user's */
  readonly stopper: RunStop;
  /** the checks on the box (stall prober, hot frames, the confirmed hang) */
  checks: RunChecks | null = null;
  /** a run across nodes with a failed worker: the rest are stopped after a grace */
  private readonly failureGrace: FailureGrace;
  /** the ranks as they started (env, argv from /proc): the proof its flags applied */
  private envWatch: ProcessEnvWatch | null = null;
  private poller: GpuPoller | null = null;

  constructor(
    private readonly o: SessionOptions,
    private readonly lane: LaneHolder,
    readonly events: LiveRunEvents,
  ) {
    this.stopper = new RunStop((t) => events.notice(t));
    this.failureGrace = new FailureGrace(
      (t) => events.notice(t),
      () => void this.stop(false, { skipHalt: true }),
      () => this.phase === 'stopping',
    );
    this.intake = new RunIntake(lane.lane, {
      changed: () => events.changed(),
      arrived: () => this.envWatch?.check(),
      dumpArrived: (name) => events.dumpArrived(name),
    });
  }

  /** start the lane's run, or pick up the run in `attachDir` */
  async begin(attachDir?: string): Promise<void> {
    if (attachDir !== undefined) return this.attach(attachDir);
    const built = buildRunSpec({ ...this.o.spec, lane: this.lane.lane });
    // the spec as its launch kind runs it (throws when the lane does not suit the kind)
    const planned = kindOf(built.launcher).plan(built);
    const spec = await withOutDir(this.o.target, planned, this.lane.lane, this.o.spec.outDir);
    this.takeModelFor(spec);
    await this.o.prepareRun?.(spec);
    // the trainer command must exist where it will run, where the kind can look from here
    await kindOf(spec.launcher).checkCommand?.(this.o.target, spec, {
      defaultCommand: !this.o.spec.demo && !this.o.spec.command?.length && !this.lane.lane.command,
    });
    const run = newRun(this.o.target, spec, this.launchEvents(), this.o);
    this.controller = run;
    this.startPoller(spec);
    await run.start(this.o.terminal);
    // after the launch: its processes are reached the way the launch says (a job's nodes, hosts)
    this.startChecks(run);
  }

  private async attach(dir: string): Promise<void> {
    const events = this.launchEvents();
    const run = this.o.replay
      ? await replayRun(this.o.target, dir, events)
      : await attachRun(this.o.target, dir, events, this.o);
    this.attached = true;
    // the lane the run was started with (its stop policy and acceptance), when it is known here
    if (this.o.lanes.has(run.spec.lane)) this.lane.lane = getLane(this.o.lanes, run.spec.lane);
    // the run's own start, not the moment it was re-attached ("0s" for a finished cell)
    this.startedAt = Date.parse(run.spec.createdAt) || this.startedAt;
    // judged with the settings it was started with, as `analyze` of its folder would
    this.takeModelFor(run.spec);
    this.controller = run;
    this.startChecks(run);
    run.followEvidence();
    this.startPoller(run.spec);
  }

  /** the launch's callbacks: every file chunk, the pid, the launch's state, the exit */
  private launchEvents() {
    const events = {
      onFileChunk: (name: string, chunk: Buffer, _where: 'run' | 'out', replace?: boolean) =>
        this.intake.onFileChunk(name, chunk, replace),
      onPid: (pid: number) => {
        debugLog(`run pid ${pid}`);
        events.onRunning();
      },
      // a run without a pid file of its own (a job, agents on hosts) runs once its launch says so
      onRunning: () => {
        if (this.phase === 'starting') this.phase = 'running';
        this.events.changed();
      },
      onLaunchChange: () => {
        debugLog(`launch: ${this.controller?.launch?.line() ?? ''}`);
        this.events.changed();
      },
      onAgentExit: (agent: string, code: number) => {
        debugLog(`agent ${agent} exited ${code}`);
        if (code !== 0) this.failureGrace.workerFailed(this.controller, `${agent}: its agent exited ${code}`);
      },
      onExit: (code: number | null) => {
        debugLog(`run exited ${code}`);
        const run = this.controller;
        if (!run) return;
        this.phase = 'exited';
        this.endedAt = Date.now();
        // a re-attached run may have ended long ago: its clock stops when exit_code was written
        if (this.attached)
          void run.exitWrittenAtMs().then((ms) => {
            if (ms === null) return;
            // never before the start: clocks of two machines, or a folder copied with new times
            this.endedAt = Math.max(ms, this.startedAt);
            this.events.changed();
          });
        // the last lines of stdout may still be in flight: drain the followers, then conclude;
        // first the checks on the box finish what they were writing (a stack request in flight
        // appends its record): the verdict and `analyze` of the folder must read the same file
        const settled = this.checks?.settle() ?? Promise.resolve();
        // whatever fails on the way (a box that stopped answering), the run is concluded: a caller
        // waiting for the verdict must never wait forever
        void settled
          .then(() => traceFlightRecorder(this.o.target, run.spec))
          .then(() => run.dispose())
          .catch((e: unknown) => debugLog(`run ${run.spec.runId}: after the exit: ${(e as Error).message}`))
          .then(() => {
            this.model.finish();
            this.conclude(run);
          });
      },
    };
    return events;
  }

  /** the evidence model of the run in `spec` (its folder on this machine keeps the clock file) */
  private takeModelFor(spec: RunSpec): void {
    const local = this.o.target.kind === 'local' || this.o.localDir;
    const dir = local ? (this.o.localDir?.(spec) ?? spec.runDir) : null;
    this.intake.takeModelFor(spec, this.lane.lane, dir, this.attached);
  }

  get model(): LiveModel {
    return this.intake.model;
  }

  private startChecks(run: RunController): void {
    // the teardown snapshot: the GPUs' processes where nvidia-smi is; a re-attached run's replayed
    // output is history, no sign of teardown
    const gpu = { target: kindOf(run.spec.launcher).gpuTarget(this.o.target), smi: this.o.smi(run.spec) };
    this.checks = new RunChecks(run, this.model, () => this.events.changed(), {
      gpu,
      watchOutput: !this.attached,
    });
    const model = this.model;
    this.envWatch = new ProcessEnvWatch(
      run.checksTarget((pid) => model.evidence.nodes.nodeOfPid(pid, undefined)),
      model,
    );
  }

  private startPoller(spec: RunSpec): void {
    const gpuTarget = kindOf(spec.launcher).gpuTarget(this.o.target);
    this.poller = pollGpuInto(this.model.evidence, gpuTarget, this.o.smi(spec), (u) => {
      this.gpu = u;
      this.events.changed();
    });
  }

  private conclude(run: RunController): void {
    this.result = this.model.result({
      nowMs: Date.now(),
      processAlive: false,
      exitCode: run.exitCode,
      stopped: this.stopper.byUser,
    });
    // the run ended with the trainer; what it left running still writes to its output
    const held = this.result.notes.filter(isOutputHolderNote);
    if (held.length) this.events.notice(`the trainer has ended; ${held.join('; ')}`);
    this.events.changed();
  }

  /** once a second: the stop ladder's words, the out_dir watch, a failed worker across nodes */
  tick(now: number): void {
    const ladder = this.stopper.text(now);
    if (ladder) this.events.notice(ladder);
    const quiet = this.intake.quietOutDir(now, this.phase === 'running');
    if (quiet) this.events.notice(quiet);
    const failed = this.failureGrace.watching(this.controller)
      ? this.model.evidence.firstWorkerFailure()
      : null;
    if (failed)
      this.failureGrace.workerFailed(this.controller, `rank ${failed.rank} failed (exit ${failed.exitCode})`);
  }

  /** whether silent ranks want checking soon (every 250 ms instead of every second) */
  probeBusy(now: number): boolean {
    return this.model.anySilent(now) || this.checks?.busy === true;
  }

  /** silent ranks are checked on the box while the run is live */
  probe(): void {
    const run = this.controller;
    if (!run || run.exited || this.phase === 'stopping') return;
    this.envWatch?.check();
    this.checks?.tick();
  }

  /**
   * resolves when this run's silence is confirmed as a hang (never, if it is not); the checks keep
   * the waiters, and they exist once begin() has returned
   */
  stallConfirmed(): Promise<CurrentSilence> {
    return this.checks?.stallConfirmed() ?? new Promise<CurrentSilence>(() => undefined);
  }

  /**
   * Stop by the lane's policy; a stalled run skips .HALT (a hung step never polls it), and so does
   * one whose ranks are stuck waiting for a failed host (`skipHalt`). `byUser`: the verdict is
   * `stopped`; a stop after a confirmed stall keeps `hang`.
   */
  async stop(byUser: boolean, opts: { skipHalt?: boolean } = {}): Promise<void> {
    const run = this.controller;
    if (!run || run.exited) return;
    this.phase = 'stopping';
    this.events.changed();
    // nothing learnt while the processes are being stopped is about the run (handlers are reset
    // during teardown): the checks end here, and the stop waits until no filed dump can be
    // overwritten by a late answer
    await this.checks?.stopQuietly();
    // a confirmed hang never polls .HALT: straight to SIGINT, then SIGKILL
    const stalled = opts.skipHalt === true || this.model.confirmedStall(Date.now()) !== null;
    await this.stopper.stop(run, this.lane.lane.stop, { byUser, stalled });
  }

  /** a second `q` while the stop ladder runs: SIGKILL the trainer's whole tree now */
  async killNow(): Promise<void> {
    const run = this.controller;
    if (run && !run.exited) await this.stopper.killNow(run);
  }

  /** the verdict once the run has exited and every file was drained */
  async finalResult(): Promise<AnalysisResult> {
    const run = this.controller;
    if (!run) throw new Error('no run');
    await run.waitForExit();
    while (!this.result) await new Promise((r) => setTimeout(r, 20));
    return this.result;
  }

  /** the ranks as their processes started (env and argv as the kernel holds them) */
  processStarts(): Promise<RankStart[]> {
    return this.envWatch?.starts() ?? Promise.resolve([]);
  }

  /** everything of this run stops: the grace, the checks, the poller, the controller */
  async dispose(): Promise<void> {
    this.failureGrace.clear();
    this.checks?.stop();
    this.poller?.stop();
    await this.controller?.dispose();
  }
}
