import { hostOfFile, hostsStoppable, isHostPidFile, launchHosts } from '../hosts/hosts-run.js';
import { isHostsTarget } from '../hosts/hosts-target.js';
import type { StopPolicy } from '../presets/preset.js';
import type { JobState } from '../slurm/job.js';
import { exitCodeOfJob, SlurmJob, submitSlurmRun } from '../slurm/slurm-run.js';
import type { PtyHandle, Target } from '../targets/target.js';
import { debugLog } from '../util/debug-log.js';
import { followArgv, type LaunchInfo, type LaunchMode, launchDetached, readLaunchInfo } from './detached.js';
import { launcherScript, type RunSpec } from './launcher.js';
import type { FileMark } from './mirror.js';
import { markOutDir, outDirFollower, readOutMarks } from './out-dir.js';
import { installStackHook } from './run-env.js';
import { RunWatcher } from './run-watcher.js';
import { handlersFor, SIGNUM } from './signals.js';
import { killTree, processRun, type StopStep, stopRun } from './stop.js';

/** Something that follows a directory's files and hands over their bytes in order. */
export interface Follower {
  start(): void | Promise<void>;
  stop(): Promise<void>;
}

export type FollowerFactory = (
  target: Target,
  dir: string,
  onChunk: (name: string, chunk: Buffer) => void,
) => Follower;

/** the plain follower: tail every evidence file of the directory from byte 0 */
export const watchFollower: FollowerFactory = (target, dir, onChunk) => new RunWatcher(target, dir, onChunk);

export interface RunEvents {
  /**
   * a chunk of a file of the run folder: the run dir's (`name`), or the trainer's own out_dir's as
   * the run dir copies it (`out/<name>`); `replace`: the file's whole new content
   */
  onFileChunk(name: string, chunk: Buffer, where: 'run' | 'out', replace?: boolean): void;
  onPid(pid: number): void;
  onExit(code: number | null): void;
  /** raw terminal output of the launcher (for a terminal view; the engine parses stdout.log) */
  onPtyData?(data: string): void;
  /** a Slurm run's job changed state (PENDING and why, RUNNING where, how it ended) */
  onJob?(state: JobState): void;
  /** a `--hosts` run: one host's agent ended (the run goes on until every agent has) */
  onHostExit?(alias: string, code: number): void;
}

/** after a job ends, how long the batch script's own exit_code may take to reach the followers */
const EXIT_CODE_GRACE_MS = 5000;

/**
 * One run on one target: writes the run dir, starts the launcher in a PTY, follows the evidence
 * files, and stops the run by the lane's policy. Knows nothing about parsing or the UI.
 */
export class RunController {
  private pty: PtyHandle | null = null;
  private watchers: Follower[] = [];
  private _pid: number | undefined;
  private _exit: number | null | undefined;
  private exitWaiters: Array<() => void> = [];
  /** set for detached runs: the run outlives this controller */
  launch: LaunchInfo | null = null;
  /** a Slurm run's job */
  job: SlurmJob | null = null;
  /** a `--hosts` run: one agent per host, stopped together */
  private hostsStarted = false;
  /** a `--hosts` run: what each host's exit_code holds so far */
  private readonly hostExitText = new Map<string, string>();
  /** the trainer's out_dir as it was before the run (what is this run's in it is what changes) */
  private outMarks: Promise<Record<string, FileMark>> | null = null;

  constructor(
    private readonly target: Target,
    readonly spec: RunSpec,
    private readonly events: RunEvents,
    private readonly follower: FollowerFactory = watchFollower,
    /** the run folder on this machine (a remote run's mirror): where the out_dir is copied */
    private readonly localDir: string = spec.runDir,
  ) {}

  get pid(): number | undefined {
    return this._pid;
  }
  get exited(): boolean {
    return this._exit !== undefined;
  }
  get exitCode(): number | null | undefined {
    return this._exit;
  }

  /**
   * Start the run. Attached (local default): the PTY runs the launcher, and closing it ends the run.
   * Detached (remote default): tmux or setsid+nohup own the run and the PTY only shows it.
   */
  async start(
    size: { cols: number; rows: number } = { cols: 120, rows: 40 },
    opts: { detached?: LaunchMode | 'auto' } = {},
  ): Promise<void> {
    const { spec, target } = this;
    await target.writeFile(`${spec.runDir}/command.json`, `${JSON.stringify(spec, null, 2)}\n`);
    await installStackHook(target, spec);
    if (spec.outDir !== spec.runDir) {
      // The trainer never deletes .HALT: a stale one would stop this run at step 1 (reference §0.3 #5).
      await target.exec(['rm', '-f', `${spec.outDir}/.HALT`, `${spec.outDir}/.anomaly_type`]);
      // what is in the out_dir now is earlier runs': only what changes from here on is this run's
      const marks = await markOutDir(target, spec.runDir, spec.outDir);
      this.outMarks = Promise.resolve(marks);
    }
    this.watchAll();
    const slurm = spec.launcher?.slurm;
    if (slurm) {
      const jobId = await submitSlurmRun(target, spec, slurm);
      this.launch = { mode: 'slurm', jobId };
      await target.writeFile(`${spec.runDir}/launch.json`, `${JSON.stringify(this.launch)}\n`);
      this.watchJob(jobId);
      return;
    }
    if (spec.launcher?.hosts) {
      if (!isHostsTarget(target)) throw new Error('a --hosts run needs a connection to each host');
      this.launch = await launchHosts(target, spec, size);
      await target.writeFile(`${spec.runDir}/launch.json`, `${JSON.stringify(this.launch, null, 2)}\n`);
      return;
    }
    if (opts.detached) {
      this.launch = await launchDetached(target, spec, size, opts.detached);
      return;
    }
    await target.writeFile(`${spec.runDir}/run.sh`, launcherScript(spec, 'tee'));
    this.pty = await target.spawnPty({ argv: ['sh', `${spec.runDir}/run.sh`], cwd: spec.cwd, ...size });
    this.pty.onData((d) => this.events.onPtyData?.(d));
    this.pty.onExit((e) => {
      // The launcher records the trainer's status in exit_code; give the watcher a moment to see it.
      setTimeout(() => void this.finishFromPty(e.exitCode), 300).unref?.();
    });
  }

  /** Re-attach to a run started earlier (by this or another nsa-dbg process): evidence from byte 0. */
  static async attach(
    target: Target,
    runDir: string,
    events: RunEvents,
    /** how to follow the run's files, which may depend on the run (its id names the local mirror) */
    followerFor?: (spec: RunSpec) => FollowerFactory,
    /** the run folder on this machine (a remote run's mirror) */
    localDirFor?: (spec: RunSpec) => string,
  ): Promise<RunController> {
    const cmd = await target.readFile(`${runDir}/command.json`);
    if (!cmd) throw new Error(`${target.label}:${runDir} is not an nsa-dbg run (no command.json)`);
    const spec = JSON.parse(cmd.toString('utf8')) as RunSpec;
    if (spec.launcher?.hosts)
      throw new Error(
        `${spec.runId} ran on several hosts (--hosts): re-attaching to it is not supported; \`nsa-dbg analyze ${runDir}\` reads its evidence`,
      );
    const rc = new RunController(
      target,
      spec,
      events,
      followerFor?.(spec) ?? watchFollower,
      localDirFor?.(spec),
    );
    rc.launch = await readLaunchInfo(target, runDir);
    if (rc.launch?.mode === 'slurm' && rc.launch.jobId) rc.watchJob(rc.launch.jobId);
    return rc;
  }

  /**
   * Start following an attached run's evidence. Separate from attach() so the caller holds the
   * controller before the first event (a finished run's exit_code arrives in the first replay).
   */
  followEvidence(): void {
    if (this.watchers.length === 0) this.watchAll();
  }

  private watchAll(): void {
    this.watch(this.spec.runDir, 'run');
    if (this.spec.outDir === this.spec.runDir) return;
    const marks = () => (this.outMarks ??= readOutMarks(this.target, this.spec.runDir));
    const w = outDirFollower(this.target, this.spec.outDir, this.localDir, marks, (name, chunk, replace) =>
      this.events.onFileChunk(name, chunk, 'out', replace),
    );
    this.watchers.push(w);
    void Promise.resolve()
      .then(() => w.start())
      .catch((e: unknown) =>
        debugLog(`out_dir copy of ${this.spec.outDir} failed: ${(e as Error)?.stack ?? e}`),
      );
  }

  /**
   * A terminal on the run for the user to look at and type into. Detached runs get a fresh
   * `tmux attach` (or a follower of stdout.log) each time, so a dropped link never leaves a dead
   * one behind; an attached local run hands over its launcher PTY, which must stay open.
   */
  async openTerminal(size: { cols: number; rows: number }): Promise<{ pty: PtyHandle; release: () => void }> {
    if (this.launch) {
      // TMUX is unset so a tmux client inside the user's own tmux attaches instead of refusing
      const pty = await this.target.spawnPty({
        argv: ['env', '-u', 'TMUX', ...followArgv(this.launch, this.spec.runDir)],
        ...size,
      });
      return { pty, release: () => pty.close() };
    }
    if (!this.pty) throw new Error('the run has no terminal');
    this.pty.resize(size.cols, size.rows);
    return { pty: this.pty, release: () => {} };
  }

  /** follow the job's state; its end is the run's exit when the batch script could not record one */
  private watchJob(jobId: string): void {
    this.job = new SlurmJob(this.target, jobId, (s) => {
      this.events.onJob?.(s);
      if (this.job?.ended) void this.endFromJob(s);
    });
    this.job.start();
  }

  /**
   * An attached run that left no exit_code and whose process is gone (its nsa-dbg was killed and
   * took the trainer with it, the box rebooted) has ended, status unknown. Looked at twice, apart,
   * so a trainer that has just exited leaves its launcher time to write the status.
   */
  async endIfLost(graceMs = 1500): Promise<void> {
    for (let look = 0; look < 2; look++) {
      if (look > 0) await new Promise((r) => setTimeout(r, graceMs));
      if (this.exited) return;
      const pid = Number.parseInt(
        (await this.target.readFile(`${this.spec.runDir}/pid`))?.toString() ?? '',
        10,
      );
      if (!Number.isInteger(pid) || pid <= 0) return;
      if (await this.target.readFile(`${this.spec.runDir}/exit_code`)) return;
      if (await this.target.isAlive(pid)) return;
    }
    this.markExited(null);
  }

  private async endFromJob(s: JobState): Promise<void> {
    const deadline = Date.now() + EXIT_CODE_GRACE_MS;
    while (!this.exited && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (this.exited) return;
    // scancel, TIMEOUT, NODE_FAIL: the batch script was killed before it could write exit_code
    const rec = await this.target.readFile(`${this.spec.runDir}/exit_code`);
    if (rec) this.setExit(rec.toString('utf8'));
    else this.markExited(exitCodeOfJob(s));
  }

  private watch(dir: string, where: 'run' | 'out'): void {
    const w = this.follower(this.target, dir, (name, chunk) => {
      if (where === 'run' && name === 'pid') this.setPid(chunk.toString('utf8'));
      else if (where === 'run' && !this.hostsStarted && isHostPidFile(this.spec, name)) {
        // the first agent is up: the run is running (its pids are the hosts', never signalled here)
        this.hostsStarted = true;
        const n = Number.parseInt(chunk.toString('utf8').trim(), 10);
        if (Number.isInteger(n)) this.events.onPid(n);
      } else if (where === 'run' && name === 'exit_code') this.setExit(chunk.toString('utf8'));
      else if (where === 'run' && this.spec.launcher?.hosts) this.noteHostExit(name, chunk);
      this.events.onFileChunk(name, chunk, where);
    });
    this.watchers.push(w);
    void Promise.resolve()
      .then(() => w.start())
      .catch((e: unknown) => debugLog(`follower of ${dir} failed: ${(e as Error)?.stack ?? e}`));
  }

  private noteHostExit(name: string, chunk: Buffer): void {
    const alias = hostOfFile(this.spec, name, 'exit_code');
    if (alias === null) return;
    const text = (this.hostExitText.get(alias) ?? '') + chunk.toString('utf8');
    this.hostExitText.set(alias, text);
    const code = Number.parseInt(text.trim(), 10);
    // the launcher writes it whole (tmp + rename): a line with a number is the agent's status
    if (text.endsWith('\n') && Number.isFinite(code)) this.events.onHostExit?.(alias, code);
  }

  private setPid(text: string): void {
    const n = Number.parseInt(text.trim(), 10);
    if (Number.isFinite(n) && n > 0 && this._pid === undefined) {
      this._pid = n;
      this.events.onPid(n);
    }
  }

  private setExit(text: string): void {
    const n = Number.parseInt(text.trim(), 10);
    this.markExited(Number.isFinite(n) ? n : null);
  }

  private async finishFromPty(code: number | null): Promise<void> {
    if (this.exited) return;
    const rec = await this.target.readFile(`${this.spec.runDir}/exit_code`);
    if (rec) this.setExit(rec.toString('utf8'));
    else this.markExited(code);
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

  /**
   * SIGUSR1 to every process of the run that has a handler for it (the trainer, each rank under
   * torchrun) — never to the shell or to a process that would die of it.
   */
  async requestDump(): Promise<string> {
    if (this.exited) return 'the run has exited: no process to dump';
    if (this.job) return 'a Slurm job: its ranks are asked one by one once their heartbeats name their pids';
    if (this.spec.launcher?.hosts)
      return 'a run on several hosts: its ranks are asked one by one once their heartbeats name their pids';
    const pid = this._pid;
    if (pid === undefined) return 'the trainer has not started yet: no pid';
    const procs = await handlersFor(this.target, pid, SIGNUM.USR1!);
    if (!procs.length) return (await this.pySpyDump(pid)) ?? noHandler(pid);
    for (const p of procs) await this.target.signal(p.pid, 'USR1');
    return `SIGUSR1 → ${procs.map((p) => `pid ${p.pid}`).join(', ')}; waiting for stackdump_*.txt`;
  }

  /**
   * Without a SIGUSR1 handler a signal would kill the trainer; py-spy reads the stacks from outside
   * instead, when the box has it. Its output goes into the run dir like any other dump.
   */
  private async pySpyDump(pid: number): Promise<string | null> {
    const has = await this.target.exec(['sh', '-c', 'command -v py-spy'], { timeoutMs: 10_000 });
    if (has.code !== 0) return null;
    const r = await this.target.exec(['py-spy', 'dump', '--pid', String(pid)], { timeoutMs: 30_000 });
    if (r.code !== 0) {
      const why = r.stderr.trim().split('\n').pop() ?? `exit ${r.code}`;
      return `no SIGUSR1 handler in pid ${pid}, and py-spy dump failed: ${why} (it needs ptrace: root, or kernel.yama.ptrace_scope=0)`;
    }
    const name = `pyspy_${Math.floor(Date.now() / 1000)}.pyspy.txt`;
    await this.target.writeFile(`${this.spec.runDir}/${name}`, r.stdout);
    return `no SIGUSR1 handler in pid ${pid}: took a py-spy dump instead (${name})`;
  }

  async stop(
    policy: StopPolicy,
    opts: { stalled: boolean; onStep?: (s: StopStep) => void },
  ): Promise<string> {
    if (this.exited) return 'already-exited';
    if (this.job) {
      return stopRun({
        target: this.target,
        run: this.job.stoppable(),
        outDir: this.spec.outDir,
        policy,
        stalled: opts.stalled,
        exited: () => this.exited,
        onStep: opts.onStep,
      });
    }
    if (this.spec.launcher?.hosts && isHostsTarget(this.target)) {
      return stopRun({
        target: this.target,
        run: hostsStoppable(this.target, this.spec),
        outDir: this.spec.outDir,
        policy,
        stalled: opts.stalled,
        exited: () => this.exited,
        onStep: opts.onStep,
      });
    }
    const pid = this._pid ?? (await this.waitForPid(2000));
    if (pid === undefined) {
      this.pty?.close();
      return 'closed';
    }
    const step = await stopRun({
      target: this.target,
      run: processRun(this.target, pid),
      outDir: this.spec.outDir,
      policy,
      stalled: opts.stalled,
      exited: () => this.exited,
      onStep: opts.onStep,
    });
    return step;
  }

  /** SIGKILL the trainer's whole process tree now (a second `q` during the stop ladder) */
  async kill(): Promise<void> {
    if (this.exited) return;
    if (this.job) return this.job.stoppable().kill();
    if (this.spec.launcher?.hosts && isHostsTarget(this.target))
      return hostsStoppable(this.target, this.spec).kill();
    if (this._pid === undefined) return;
    await killTree(this.target, this._pid);
  }

  /** stop following files (after a final drain) and release the PTY (a detached run keeps going) */
  async dispose(): Promise<void> {
    await Promise.all(this.watchers.map((w) => w.stop().catch(() => undefined)));
    this.watchers = [];
    this.job?.stop();
    this.pty?.close();
    this.pty = null;
  }
}

function noHandler(pid: number): string {
  return `no SIGUSR1 handler in pid ${pid} or its children yet (SigCgt): not sent, it would kill the trainer; install py-spy on the box (pip install py-spy) for dumps without a handler`;
}
