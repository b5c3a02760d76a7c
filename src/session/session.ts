import type { AnalysisResult } from '../analysis/evidence.js';
import { isOutputHolderNote } from '../analysis/evidence-facts.js';
import type { CurrentSilence } from '../analysis/silences.js';
import { clockLine } from '../ingest/clock.js';
import type { GpuSample } from '../ingest/events.js';
import { EXIT_CODE_FILE } from '../ingest/launcher-files.js';
import { CLOCK_FILE, OUT_COPY_DIR } from '../ingest/run-files.js';
import { kindOf } from '../launch/kinds.js';
import { replayRun } from '../launch/replay.js';
import { attachRun, newRun, planRun } from '../launch/run.js';
import { getPreset } from '../presets/load.js';
import { evidenceOptionsOf, type Preset } from '../presets/preset.js';
import { buildRunSpec } from '../runs/build-spec.js';
import { traceFlightRecorder } from '../runs/flight-recorder-trace.js';
import type { RunSpec } from '../runs/launcher.js';
import { trainerOutDir } from '../runs/out-dir-of.js';
import type { RunController } from '../runs/run-controller.js';
import { CommandNotFound, requireCommand, ScriptNotFound } from '../targets/find-command.js';
import type { PtyHandle } from '../targets/target.js';
import { debugLog } from '../util/debug-log.js';
import { ArrivalClock } from './arrival-clock.js';
import { FailureGrace } from './failure-grace.js';
import { GpuPoller, type GpuUpdate } from './gpu-poller.js';
import { LiveModel } from './live-model.js';
import { ProcessEnvWatch, type RankStart } from './process-env.js';
import { SnapshotPublisher } from './publisher.js';
import { RunChecks } from './run-checks.js';
import type { LinkView, SessionOptions } from './session-options.js';
import { buildSnapshot } from './snapshot.js';
import type { DashboardState, LaneSummary, RunPhase, SessionController } from './state.js';
import { type StopLadder, stopText } from './stop-ladder.js';

/**
 * New data reaches the screen at most once a second, with the clock (htop refreshes every 1.5 s):
 * a trainer printing thousands of lines a second would otherwise cost a full re-render (~10 ms,
 * most of it Ink measuring the braille charts) and a screenful of changed cells 20 times a second.
 * Keys are drawn at once: they change the UI's own state, not the snapshot.
 */
const PUBLISH_MS = 1000;
/** how long a run may go without a file from the trainer's own out_dir before the user is told */
const OUT_DIR_QUIET_MS = 60_000;

/**
 * The live engine behind the TUI: owns the current run, its evidence model, the GPU poller and the
 * CPU sampler, and publishes immutable DashboardState snapshots at a bounded rate. Plain TypeScript;
 * the UI only subscribes and calls the SessionController methods.
 */
export class Session implements SessionController {
  private run: RunController | null = null;
  private model = new LiveModel();
  private preset: Preset;
  private phase: RunPhase = 'idle';
  private startedAt: number | null = null;
  private endedAt: number | null = null;
  private stoppedByUser = false;
  private gpu: GpuUpdate = { available: false, message: 'waiting for nvidia-smi', gpus: [], processes: [] };
  private timers: NodeJS.Timeout[] = [];
  private probeTimer: NodeJS.Timeout | null = null;
  /** a run across nodes: the grace for the rest after a worker failed */
  private readonly failureGrace = new FailureGrace();
  private disposed = false;
  private poller: GpuPoller | null = null;
  /** the current run's checks on the box (stall prober, hot frames, the confirmed hang) */
  private checks: RunChecks | null = null;
  /** the current run's ranks as they started (env, argv from /proc): the proof its flags applied */
  private envWatch: ProcessEnvWatch | null = null;
  /** callers waiting for a confirmed hang; handed on to each new run's checks */
  private confirmedWaiters: Array<(c: CurrentSilence) => void> = [];
  /** the stop ladder in progress, for "SIGINT sent 3 s ago; SIGKILL in 7 s" */
  private stopping: StopLadder | null = null;
  private lastResult: AnalysisResult | null = null;
  private connection: LinkView | undefined;
  private attachPending: string | undefined;
  /** the current run was re-attached, not started here: its times come from its folder */
  private attached = false;
  /** the model (and its version) the current snapshot was built from */
  private builtFrom: { model: LiveModel | null; version: number; state: DashboardState | null } = {
    model: null,
    version: -1,
    state: null,
  };
  private readonly pub: SnapshotPublisher<DashboardState>;
  /** a run whose trainer has its own out_dir: whether anything arrived from it yet */
  private outDirWatch: { spec: RunSpec; since: number; seen: boolean } | null = null;

  constructor(private readonly o: SessionOptions) {
    this.preset = getPreset(o.presets, o.lane);
    this.attachPending = o.attachRunDir;
    this.pub = new SnapshotPublisher((now) => this.build(now));
  }

  async start(): Promise<void> {
    const publishMs = this.o.publishMs ?? PUBLISH_MS;
    // ages and the verdict change with time alone; at the default rate one timer does both (an idle
    // dashboard wakes once a second, not twice)
    if (publishMs === 1000)
      this.timers.push(
        setInterval(() => {
          this.tick();
          this.pub.publishIfDirty();
        }, 1000),
      );
    else {
      this.timers.push(setInterval(() => this.pub.publishIfDirty(), publishMs));
      this.timers.push(setInterval(() => this.tick(), 1000));
    }
    for (const t of this.timers) t.unref?.();
    this.scheduleProbe();
    try {
      await this.startRun();
    } catch (e) {
      // nothing was started: the session ends here (its timers too), and the caller says why
      if (e instanceof CommandNotFound || e instanceof ScriptNotFound) await this.dispose();
      throw e;
    }
  }

  private async startRun(): Promise<void> {
    this.model = new LiveModel({
      stepRegex: this.preset.stepRegex,
      ...evidenceOptionsOf(this.preset.detector),
    });
    this.checks?.stop();
    this.checks = null;
    this.envWatch = null;
    this.stopping = null;
    this.failureGrace.clear();
    this.stoppedByUser = false;
    this.lastResult = null;
    // `let`: the run's own model (its detector settings, layout, clock) replaces this one before
    // any byte is read
    let model = this.model;
    let clock = new ArrivalClock(null);
    const events = {
      onFileChunk: (name: string, chunk: Buffer, _where: 'run' | 'out', replace?: boolean) => {
        // the clock is the session's own: written and handed to the reader here, never followed
        if (name === CLOCK_FILE) return;
        const newest = model.digest.newestDumpName;
        const now = Date.now();
        const tick = clock.arrived(name, chunk, model.trainerNowS(now));
        if (tick !== null) model.onFileChunk(CLOCK_FILE, tick, now);
        model.onFileChunk(name, chunk, now, replace);
        // a rank's pid arrived: its process is read while it is there
        this.envWatch?.check();
        // evidence arrived from the trainer's out_dir: it is where the trainer writes
        if (this.outDirWatch && name.startsWith(`${OUT_COPY_DIR}/`)) this.outDirWatch.seen = true;
        // "waiting for stackdump_*.txt" is answered once the dump is here
        if (model.digest.newestDumpName !== newest && this.pub.notice()?.includes('waiting for stackdump'))
          this.pub.setNotice(`stack dump: ${model.digest.newestDumpName}`);
        this.pub.markDirty();
      },
      onPid: (pid: number) => {
        // `run` is not assigned yet while an attach replays the local mirror: log without it
        debugLog(`run pid ${pid}`);
        events.onRunning();
      },
      // a run without a pid file of its own (a job, agents on hosts) runs once its launch says so
      onRunning: () => {
        if (this.phase === 'starting') this.phase = 'running';
        this.pub.markDirty();
      },
      onLaunchChange: () => {
        debugLog(`launch: ${this.run?.launch?.line() ?? ''}`);
        this.pub.markDirty();
      },
      onAgentExit: (agent: string, code: number) => {
        debugLog(`agent ${agent} exited ${code}`);
        if (code !== 0) this.afterWorkerFailure(run, `${agent}: its agent exited ${code}`);
      },
      onExit: (code: number | null) => {
        debugLog(`run exited ${code}`);
        if (this.run !== run) return;
        this.phase = 'exited';
        this.endedAt = Date.now();
        // a re-attached run may have ended long ago: its clock stops when exit_code was written
        if (this.attached) void this.exitTimeOf(run);
        // the last lines of stdout may still be in flight: drain the followers, then conclude;
        // first the checks on the box finish what they were writing (a stack request in flight
        // appends its record): the verdict and `analyze` of the folder must read the same file
        const settled = this.checks?.settle() ?? Promise.resolve();
        void settled
          .then(() => traceFlightRecorder(this.o.target, run.spec))
          .then(() => run.dispose())
          .then(() => {
            model.finish();
            this.conclude();
          });
      },
    };
    let run: RunController;
    this.phase = 'starting';
    this.startedAt = Date.now();
    this.endedAt = null;
    this.pub.markDirty();
    const size = this.o.terminal;
    if (this.attachPending) {
      const dir = this.attachPending;
      this.attachPending = undefined;
      run = this.o.replay
        ? await replayRun(this.o.target, dir, events)
        : await attachRun(this.o.target, dir, events, this.o);
      this.attached = true;
      // the run's own start, not the moment it was re-attached ("0s" for a finished cell)
      this.startedAt = Date.parse(run.spec.createdAt) || this.startedAt;
      // the lane the run was started with (its stop policy and acceptance), when it is known here
      if (this.o.presets.has(run.spec.lane)) this.preset = getPreset(this.o.presets, run.spec.lane);
      // judged with the settings it was started with, as `analyze` of its folder would
      ({ model, clock } = this.modelFor(run.spec, true));
      this.run = run;
      this.startChecks(run);
      run.followEvidence();
      this.startPoller(run.spec);
      // a run whose process died with no exit_code (a Slurm job's end is its scheduler's to say)
      if (!kindOf(run.spec.launcher).endSaidByScheduler) void run.endIfLost().catch(() => undefined);
      return;
    }
    this.attached = false;
    // the launch kind completes the spec (its folder layout; a multi-node kind needs torchrun)
    const spec = await this.withOutDir(planRun(buildRunSpec({ ...this.o.spec, preset: this.preset })));
    ({ model, clock } = this.modelFor(spec, false));
    await this.o.prepareRun?.(spec);
    // one box: its trainer command must exist there (nodes of a job or of hosts are not this target)
    if (!kindOf(spec.launcher).spansNodes)
      await requireCommand(this.o.target, spec, {
        defaultCommand: !this.o.spec.demo && !this.o.spec.command?.length && !this.preset.command,
      });
    run = newRun(this.o.target, spec, events, this.o);
    this.run = run;
    this.startPoller(spec);
    await run.start(size);
    // after the launch: its processes are reached the way the launch says (a job's nodes, hosts)
    this.startChecks(run);
  }

  /** when the run's exit_code was written (its end), from the box that holds it */
  private async exitTimeOf(run: RunController): Promise<void> {
    const r = await this.o.target
      .exec(['stat', '-c', '%Y', `${run.spec.runDir}/${EXIT_CODE_FILE}`], { timeoutMs: 5000 })
      .catch(() => null);
    const s = Number(r?.code === 0 ? r.stdout.trim() : Number.NaN);
    if (!Number.isFinite(s) || s <= 0 || this.run !== run) return;
    // never before the start: clocks of two machines, or a folder copied with new times
    this.endedAt = Math.max(s * 1000, this.startedAt ?? 0);
    this.pub.markDirty();
  }

  /**
   * The run's evidence model (judged with the settings it was started with, its folder read as its
   * launcher laid it out) and the clock of its output, read back first on an attach.
   */
  private modelFor(spec: RunSpec, attached: boolean): { model: LiveModel; clock: ArrivalClock } {
    const model = new LiveModel({
      stepRegex: spec.stepRegex ?? this.preset.stepRegex,
      ...evidenceOptionsOf(spec.detector ?? this.preset.detector),
      layout: spec.layout ?? {},
      timed: true,
    });
    const clock = new ArrivalClock(
      this.o.target.kind === 'local' || this.o.localDir ? this.localDirOf(spec) : null,
      attached,
    );
    for (const r of clock.existing()) model.onFileChunk(CLOCK_FILE, Buffer.from(clockLine(r)), Date.now());
    this.model = model;
    this.outDirWatch = spec.outDir === spec.runDir ? null : { spec, since: Date.now(), seen: false };
    return { model, clock };
  }

  /** the trainer's own out_dir, when it has one (its config's, the lane's): copied into the run */
  private async withOutDir(spec: RunSpec): Promise<RunSpec> {
    const local = this.o.target.kind === 'local' ? process.env : {};
    const c = await trainerOutDir(this.o.target, spec, this.preset, this.o.spec.outDir, local);
    if (c.dir === spec.runDir || c.from === 'run dir') return spec;
    return {
      ...spec,
      outDir: c.dir,
      outDirFrom: { from: c.from, ...(c.config ? { config: c.config } : {}) },
      layout: { ...spec.layout, outCopy: OUT_COPY_DIR },
    };
  }

  /**
   * Nothing from the trainer's out_dir a minute into the run: say where nsa-dbg is looking, once (a
   * config's out_dir that is not the one the trainer uses is the usual cause).
   */
  private checkOutDir(now: number): void {
    const w = this.outDirWatch;
    if (w === null || w.seen || now - w.since < OUT_DIR_QUIET_MS || this.phase !== 'running') return;
    this.outDirWatch = null;
    this.pub.setNotice(
      `no heartbeats or dumps in ${w.spec.outDir} after ${Math.round(OUT_DIR_QUIET_MS / 1000)} s — is that the trainer's out_dir? (${w.spec.outDirFrom?.config ?? w.spec.outDirFrom?.from ?? ''})`,
    );
  }

  /**
   * A run across nodes with a failed worker (or agent): the rest get a grace to end on their own,
   * then are stopped (src/session/failure-grace.ts). The verdict stays the crash's.
   */
  private afterWorkerFailure(run: RunController, what: string): void {
    if (this.failureGrace.armed || run.exited || !run.kind.spansNodes) return;
    this.pub.setNotice(
      `${what}; the rest of the run is stopped if it has not ended in ${this.failureGrace.seconds} s`,
    );
    this.failureGrace.arm(() => {
      if (this.run !== run || run.exited || this.phase === 'stopping') return;
      debugLog(`run ${run.spec.runId}: ${what} ${this.failureGrace.seconds} s ago; stopping the rest`);
      void this.stopCurrent(false, { skipHalt: true });
    });
  }

  private startChecks(run: RunController): void {
    // the teardown snapshot: the GPUs' processes where nvidia-smi is; a re-attached run's replayed
    // output is history, no sign of teardown
    const gpu = { target: kindOf(run.spec.launcher).gpuTarget(this.o.target), smi: this.o.smi(run.spec) };
    this.checks = new RunChecks(run, this.model, () => this.pub.markDirty(), {
      gpu,
      watchOutput: !this.attached,
    });
    const model = this.model;
    this.envWatch = new ProcessEnvWatch(
      run.checksTarget((pid) => model.evidence.nodes.nodeOfPid(pid, undefined)),
      model,
    );
    for (const w of this.confirmedWaiters.splice(0)) void this.checks.stallConfirmed().then(w);
  }

  private startPoller(spec: RunSpec): void {
    this.poller?.stop();
    const seen = new WeakSet<GpuSample>();
    const model = this.model;
    const gpuTarget = kindOf(spec.launcher).gpuTarget(this.o.target);
    this.poller = new GpuPoller(gpuTarget, this.o.smi(spec), (u) => {
      this.gpu = u;
      // each sample once into the evidence (the report's GPU section), however often it is re-sent
      for (const g of u.gpus) {
        if (seen.has(g)) continue;
        seen.add(g);
        model.evidence.addGpuSample(g);
      }
      this.pub.markDirty();
    });
    this.poller.start();
  }

  /** link state from the SSH connection, shown as an outage in the header */
  setConnection(c: LinkView): void {
    this.connection = c;
    this.pub.markDirty();
  }

  private conclude(): void {
    const run = this.run;
    if (!run) return;
    this.lastResult = this.model.result({
      nowMs: Date.now(),
      processAlive: false,
      exitCode: run.exitCode,
      stopped: this.stoppedByUser,
    });
    // the run ended with the trainer; what it left running still writes to its output
    const held = this.lastResult.notes.filter(isOutputHolderNote);
    if (held.length) this.pub.setNotice(`the trainer has ended; ${held.join('; ')}`);
    this.pub.markDirty();
  }

  private tick(): void {
    if (this.stopping) this.pub.setNotice(stopText(this.stopping, Date.now()));
    this.checkOutDir(Date.now());
    const watch = this.run?.kind.spansNodes === true && !this.failureGrace.armed;
    const failed = watch ? this.model.evidence.firstWorkerFailure() : null;
    if (failed && this.run)
      this.afterWorkerFailure(this.run, `rank ${failed.rank} failed (exit ${failed.exitCode})`);
    this.pub.markDirty();
  }

  /**
   * Silent ranks are checked on the box as soon as they become suspect: every 250 ms while a rank
   * is silent past its threshold (or a check is under way), once a second otherwise.
   */
  private scheduleProbe(): void {
    if (this.disposed) return;
    const busy = this.model.silences(Date.now()).length > 0 || this.checks?.busy === true;
    const t = setTimeout(
      () => {
        // silent ranks are checked on the box while the run is live
        if (this.run && !this.run.exited && this.phase !== 'stopping') {
          this.envWatch?.check();
          this.checks?.tick();
        }
        this.scheduleProbe();
      },
      busy ? 250 : 1000,
    );
    t.unref?.();
    this.probeTimer = t;
  }

  /** resolves when the current run's silence is confirmed as a hang (never, if it is not) */
  stallConfirmed(): Promise<CurrentSilence> {
    if (this.checks) return this.checks.stallConfirmed();
    return new Promise((r) => this.confirmedWaiters.push(r));
  }

  private build(now: number): DashboardState {
    const version = this.model.version;
    const b = this.builtFrom;
    const unchanged = b.model === this.model && b.version === version ? b.state : null;
    const state = buildSnapshot({
      unchanged,
      now,
      target: this.o.target.label,
      simulated: this.o.simulated,
      preset: this.preset,
      run: this.run,
      phase: this.phase,
      startedAt: this.startedAt,
      endedAt: this.endedAt,
      model: this.model,
      gpu: this.gpu,
      notice: this.pub ? this.pub.notice(now) : null,
      stopping: this.stopping ? stopText(this.stopping, now) : null,
      connection: this.connection,
      result: this.lastResult,
      hotFrames: this.checks?.hotFrames() ?? null,
    });
    this.builtFrom = { model: this.model, version, state };
    return state;
  }

  getState(): DashboardState {
    return this.pub.get();
  }

  subscribe(cb: (s: DashboardState) => void): () => void {
    return this.pub.subscribe(cb);
  }

  lanes(): LaneSummary[] {
    return [...this.o.presets.values()]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((p) => ({ name: p.name, description: p.description, env: p.env }));
  }

  async requestDump(): Promise<string> {
    if (!this.run) return 'no run';
    this.checks?.dropFinishedHotFrames();
    // one request per rank pid from the heartbeats (never torchrun); else the process tree's handlers
    let msg = this.run.exited ? null : this.checks?.dumpEveryRank((m) => this.pub.setNotice(m));
    if (!msg) {
      try {
        msg = await this.run.requestDump();
        debugLog(`dump: ${msg}`);
      } catch (e) {
        msg = `dump failed: ${(e as Error).message}`;
      }
    }
    this.pub.setNotice(msg);
    return msg;
  }

  /**
   * stop by the lane's policy; a stalled run skips .HALT (a hung step never polls it), and so does
   * one whose ranks are stuck waiting for a failed host (`skipHalt`)
   */
  private async stopCurrent(byUser = true, opts: { skipHalt?: boolean } = {}): Promise<void> {
    const run = this.run;
    if (!run || run.exited) return;
    // a user's stop makes the verdict `stopped`; a stop after a confirmed stall keeps `hang`
    this.stoppedByUser = byUser;
    this.phase = 'stopping';
    this.pub.markDirty();
    // nothing learnt while the processes are being stopped is about the run (handlers are reset
    // during teardown): the checks end here, and the stop waits until no filed dump can be
    // overwritten by a late answer
    await this.checks?.stopQuietly();
    // a confirmed hang never polls .HALT: straight to SIGINT, then SIGKILL
    const stalled = opts.skipHalt === true || this.model.confirmedStall(Date.now()) !== null;
    debugLog(`run ${run.spec.runId}: stopping (stalled=${stalled}, byUser=${byUser})`);
    const policy = this.preset.stop;
    const how = await run.stop(policy, {
      stalled,
      onStep: (s) => {
        debugLog(`run ${run.spec.runId}: stop step ${s}`);
        const nextInS = s === 'halt' ? policy.haltWaitS : s === 'sigint' ? policy.sigintWaitS : null;
        this.stopping = { step: s, atMs: Date.now(), nextInS };
        this.pub.setNotice(stopText(this.stopping, Date.now()));
      },
    });
    this.stopping = null;
    debugLog(`run ${run.spec.runId}: stop ended by ${how}`);
    await run.waitForExit();
    debugLog(`run ${run.spec.runId}: exit seen`);
    await run.dispose();
  }

  async switchLane(lane: string): Promise<void> {
    const next = getPreset(this.o.presets, lane);
    await this.stopCurrent();
    this.preset = next;
    this.pub.setNotice(`lane ${lane}: starting`);
    await this.startRun();
    // callers that read getState() right after the switch see the new lane, not the last tick's
    this.pub.publishIfDirty();
  }

  async openTerminal(cols: number, rows: number): Promise<{ pty: PtyHandle; release: () => void } | string> {
    const run = this.run;
    if (!run) return 'no run';
    if (run.exited) return 'the run has ended: its output is in the log pane';
    try {
      return await run.openTerminal({ cols, rows });
    } catch (e) {
      return `no terminal: ${(e as Error).message}`;
    }
  }

  /** `K`: what cancelling the run's launch would do (null: its launch has no cancel) */
  cancelJobText(): string | null {
    return this.run?.launch?.cancellable?.cancelText() ?? null;
  }

  async cancelJob(): Promise<string> {
    const c = this.run?.launch?.cancellable;
    if (!c) return 'this run has no job to cancel (K cancels a Slurm job)';
    const r = await c.cancel();
    if (r.cancelled) {
      this.stoppedByUser = true;
      this.pub.setNotice(r.message);
    }
    return r.message;
  }

  /** quitting leaves the run for `attach` (its kind says, and whether it was picked up here) */
  private leavesRunning(): boolean {
    return this.run?.kind.leavesRunningOnQuit(this.attached) === true;
  }

  quitConsequence(): string {
    const run = this.run;
    if (!run || run.exited || !run.launch) return 'The run has ended; nothing is left running.';
    return run.launch.quitWords({
      leave: this.leavesRunning(),
      policy: this.preset.stop,
      targetLabel: this.o.target.label,
    });
  }

  /** a second `q` while the stop ladder runs: SIGKILL the trainer's whole tree now */
  async killNow(): Promise<void> {
    const run = this.run;
    if (!run || run.exited) return;
    this.stopping = { step: 'sigkill', atMs: Date.now(), nextInS: null };
    this.pub.setNotice(stopText(this.stopping, Date.now()));
    await run.kill();
  }

  /** `s`: N stack samples 1.5 s apart, shown as a table of hot frames (kept with the evidence) */
  async sampleHotFrames(count = 10): Promise<string> {
    if (!this.run || !this.checks || this.run.exited) return 'no running trainer to sample';
    return this.checks.sampleHotFrames(count);
  }

  async quit(): Promise<void> {
    if (!this.leavesRunning()) await this.stopCurrent();
    await this.dispose();
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
    this.failureGrace.clear();
    this.checks?.stop();
    this.poller?.stop();
    await this.run?.dispose();
  }

  /** headless ended by a signal: stop the run as a user's stop (verdict `stopped`) */
  async stopByUser(): Promise<void> {
    await this.stopCurrent(true);
  }

  /** headless: stop after a confirmed stall, keeping the stall in the verdict */
  async stopForEvidence(): Promise<void> {
    await this.stopCurrent(false);
  }

  /** the verdict once the run has exited and every file was drained */
  async finalResult(): Promise<AnalysisResult> {
    const run = this.run;
    if (!run) throw new Error('no run');
    await run.waitForExit();
    while (!this.lastResult) await new Promise((r) => setTimeout(r, 20));
    return this.lastResult;
  }

  currentPreset(): Preset {
    return this.preset;
  }

  /** the current run's ranks as their processes started (env and argv as the kernel holds them) */
  processStarts(): Promise<RankStart[]> {
    return this.envWatch?.starts() ?? Promise.resolve([]);
  }

  /** for the CLI/tests: the run in progress */
  currentRun(): RunController | null {
    return this.run;
  }

  /** where a run's evidence is on this machine: its run dir, or a remote run's mirror */
  localDirOf(spec: RunSpec): string {
    return this.o.localDir?.(spec) ?? spec.runDir;
  }
}
