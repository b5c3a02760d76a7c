import {
  COMMAND_FILE,
  EXIT_CODE_FILE,
  exitCodeOf,
  PID_FILE,
  pidOf,
  readExitCode,
} from '../ingest/launcher-files.js';
import type { StopPolicy } from '../lanes/lane.js';
import type { PtyHandle, Target } from '../targets/target.js';
import { debugLog } from '../util/debug-log.js';
import { type Follower, type FollowerFactory, watchFollower } from './follower.js';
import type { ActiveLaunch, DumpAsk, LaunchContext, LaunchEvents, LaunchKind, Size } from './launch-kind.js';
import type { RunSpec } from './launcher.js';
import type { FileMark } from './mirror.js';
import { markOutDir, outDirFollower, readOutMarks } from './out-dir.js';
import { installStackHook } from './run-env.js';
import { type StopStep, stopRun } from './stop.js';

export interface RunEvents {
  /**
   * a chunk of a file of the run folder: the run dir's (`name`), or the trainer's own out_dir's as
   * the run dir copies it (`out/<name>`); `replace`: the file's whole new content
   */
  onFileChunk(name: string, chunk: Buffer, where: 'run' | 'out', replace?: boolean): void;
  onPid(pid: number): void;
  onExit(code: number | null): void;
  /** the run is under way where no pid file says so (a job runs, an agent is up) */
  onRunning?(): void;
  /** what the launch says of itself changed (a job's state: the header's line) */
  onLaunchChange?(): void;
  /** a run across nodes: one agent ended (the run goes on until every agent has) */
  onAgentExit?(agent: string, code: number): void;
  /** raw terminal output of the launcher (for a terminal view; the engine parses stdout.log) */
  onPtyData?(data: string): void;
}

export interface RunControllerOptions {
  /** how the run is launched (src/launch/kinds.ts gives the spec's) */
  kind: LaunchKind;
  /** how the run's files are followed, before its kind has a say (default: a tail of the run dir) */
  follower?: FollowerFactory;
  /** the run folder on this machine (a remote run's mirror): where the out_dir is copied */
  localDir?: string;
}

/**
 * One run on one target: writes the run dir, has its launch kind start it (or pick it up again),
 * follows the evidence files, and stops the run by the lane's policy. Knows nothing about parsing,
 * the UI, or which kind of launch it is: it asks the kind.
 */
export class RunController {
  private watchers: Follower[] = [];
  private _pid: number | undefined;
  private _exit: number | null | undefined;
  private exitWaiters: Array<() => void> = [];
  private live: ActiveLaunch | null = null;
  /** the trainer's out_dir as it was before the run (what is this run's in it is what changes) */
  private outMarks: Promise<Record<string, FileMark>> | null = null;
  private readonly follower: FollowerFactory;
  private readonly localDir: string;
  readonly kind: LaunchKind;

  constructor(
    private readonly target: Target,
    readonly spec: RunSpec,
    private readonly events: RunEvents,
    o: RunControllerOptions,
  ) {
    this.kind = o.kind;
    this.follower = o.kind.follower(target, spec, o.follower ?? watchFollower);
    this.localDir = o.localDir ?? spec.runDir;
  }

  get pid(): number | undefined {
    return this._pid;
  }
  get exited(): boolean {
    return this._exit !== undefined;
  }
  get exitCode(): number | null | undefined {
    return this._exit;
  }
  /** the launch while it is followed (null before start/attach) */
  get launch(): ActiveLaunch | null {
    return this.live;
  }

  private context(): LaunchContext {
    const events: LaunchEvents = {
      running: () => this.events.onRunning?.(),
      changed: () => this.events.onLaunchChange?.(),
      agentExited: (agent, code) => this.events.onAgentExit?.(agent, code),
      ended: (code) => void this.finishFrom(code),
      ptyData: (d) => this.events.onPtyData?.(d),
    };
    return {
      target: this.target,
      spec: this.spec,
      events,
      pid: () => this._pid,
      waitForPid: (ms) => this.waitForPid(ms),
      exited: () => this.exited,
    };
  }

  /** Write the run dir and have the kind launch it. */
  async start(size: Size = { cols: 120, rows: 40 }): Promise<void> {
    const { spec, target } = this;
    await target.writeFile(`${spec.runDir}/${COMMAND_FILE}`, `${JSON.stringify(spec, null, 2)}\n`);
    await installStackHook(target, spec);
    if (spec.outDir !== spec.runDir) {
      // The trainer never deletes .HALT: a stale one would stop this run at step 1 (reference §0.3 #5).
      await target.exec(['rm', '-f', `${spec.outDir}/.HALT`, `${spec.outDir}/.anomaly_type`]);
      // what is in the out_dir now is earlier runs': only what changes from here on is this run's
      const marks = await markOutDir(target, spec.runDir, spec.outDir);
      this.outMarks = Promise.resolve(marks);
    }
    this.watchAll();
    this.live = await this.kind.start(this.context(), size);
  }

  /**
   * Pick up a run started earlier (by this or another nsa-dbg process). Its evidence is followed
   * from byte 0 once followEvidence() is called, so the caller holds the controller before the
   * first event (a finished run's exit_code arrives in the first replay).
   */
  async attach(): Promise<void> {
    this.live = await this.kind.attach(this.context());
  }

  followEvidence(): void {
    if (this.watchers.length === 0) this.watchAll();
  }

  private watchAll(): void {
    this.watch(this.spec.runDir);
    if (this.spec.outDir === this.spec.runDir) return;
    const marks = () => (this.outMarks ??= readOutMarks(this.target, this.spec.runDir));
    const w = outDirFollower(this.target, this.spec.outDir, this.localDir, marks, (name, chunk, replace) =>
      this.events.onFileChunk(name, chunk, 'out', replace),
    );
    this.begin(w, `out_dir copy of ${this.spec.outDir}`);
  }

  /** follow with `w` from the next tick on; `what` names it when it fails */
  private begin(w: Follower, what: string): void {
    this.watchers.push(w);
    void Promise.resolve()
      .then(() => w.start())
      .catch((e: unknown) => debugLog(`${what} failed: ${(e as Error)?.stack ?? e}`));
  }

  /** when the run's exit_code was written (its end), by the box that holds it; null: unknown */
  async exitWrittenAtMs(): Promise<number | null> {
    const r = await this.target
      .exec(['stat', '-c', '%Y', `${this.spec.runDir}/${EXIT_CODE_FILE}`], { timeoutMs: 5000 })
      .catch(() => null);
    const s = Number(r?.code === 0 ? r.stdout.trim() : Number.NaN);
    return Number.isFinite(s) && s > 0 ? s * 1000 : null;
  }

  private watch(dir: string): void {
    const w = this.follower(this.target, dir, (name, chunk) => {
      if (name === PID_FILE) this.setPid(chunk);
      else if (name === EXIT_CODE_FILE) this.markExited(exitCodeOf(chunk));
      else this.live?.noteFile?.(name, chunk);
      this.events.onFileChunk(name, chunk, 'run');
    });
    this.begin(w, `follower of ${dir}`);
  }

  /** A terminal on the run for the user to look at and type into (the kind's). */
  async openTerminal(size: Size): Promise<{ pty: PtyHandle; release: () => void }> {
    if (!this.live) throw new Error('the run has not started');
    return this.live.terminal(size);
  }

  private setPid(text: Buffer): void {
    const n = pidOf(text);
    if (n !== null && this._pid === undefined) {
      this._pid = n;
      this.events.onPid(n);
    }
  }

  /** the launcher is gone: the run's own exit_code when it wrote one, else what the launcher says */
  private async finishFrom(code: number | null): Promise<void> {
    if (this.exited) return;
    const rec = await readExitCode((p) => this.target.readFile(p), this.spec.runDir);
    this.markExited(rec ?? code);
  }

  private markExited(code: number | null): void {
    if (this.exited) return;
    this._exit = code;
    this.events.onExit(code);
    for (const w of this.exitWaiters.splice(0)) w();
  }

  /** resolves once the pid file exists (or the run already ended) */
  async waitForPid(timeoutMs = 30_000): Promise<number | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this._pid === undefined && !this.exited && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    return this._pid;
  }

  waitForExit(): Promise<void> {
    return this.exited ? Promise.resolve() : new Promise((r) => this.exitWaiters.push(r));
  }

  /** `d` before any rank named its pid: the launch's own way of asking for stacks */
  async requestDump(): Promise<DumpAsk> {
    if (this.exited) return { message: 'the run has exited: no process to dump', sent: false };
    return this.live ? this.live.requestDump() : { message: 'the run has not started yet', sent: false };
  }

  /** the target the run's processes are reached through (stack requests, /proc facts) */
  checksTarget(nodeOfPid: (pid: number) => string | null): Target {
    return this.live?.checksTarget(nodeOfPid) ?? this.target;
  }

  async stop(
    policy: StopPolicy,
    opts: { stalled: boolean; onStep?: (s: StopStep) => void },
  ): Promise<string> {
    if (this.exited) return 'already-exited';
    const run = await this.live?.stoppable();
    if (!run) return 'closed';
    return stopRun({
      target: this.target,
      run,
      outDir: this.spec.outDir,
      policy,
      stalled: opts.stalled,
      exited: () => this.exited,
      onStep: opts.onStep,
    });
  }

  /** SIGKILL the trainer's whole process tree now (a second `q` during the stop ladder) */
  async kill(): Promise<void> {
    if (this.exited) return;
    const run = await this.live?.stoppable();
    await run?.kill();
  }

  /** stop following files (after a final drain), release what the launch holds (a detached run goes on) */
  async dispose(): Promise<void> {
    // taken first: a second dispose while the first drains stops nothing twice
    const watchers = this.watchers;
    this.watchers = [];
    await Promise.all(watchers.map((w) => w.stop().catch(() => undefined)));
    this.live?.dispose();
  }
}
