/**
 * A Target is where runs execute: this machine (node-pty) or a GPU box over SSH (ssh2). The run
 * controller, evidence mirror and GPU poller are written against this interface only, so the same
 * engine drives both.
 */

export interface Disposable {
  dispose(): void;
}

/** A pseudo-terminal running a command on the target. */
export interface PtyHandle {
  /** pid of the process the PTY started (the shell or launcher), on the target */
  readonly pid: number;
  onData(cb: (data: string) => void): Disposable;
  onExit(cb: (e: { exitCode: number | null; signal?: number | string | null }) => void): Disposable;
  write(data: string): void;
  resize(cols: number, rows: number): void;
  /** close the PTY; whether the process survives depends on how it was started (detached runs do) */
  close(): void;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number | null;
}

export interface ExecOptions {
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
}

export interface SpawnPtyOptions {
  /** argv; the first element is the program. Never joined unquoted. */
  argv: string[];
  cwd?: string;
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
}

export interface TailOptions {
  /** byte offset to start from (resume after a reconnect) */
  fromOffset?: number;
  /** how often to look for new bytes when the target cannot push them */
  pollMs?: number;
  /**
   * the file only grows (never rewritten or replaced while followed): a follower may keep it open
   * between looks
   */
  appendOnly?: boolean;
}

/** A byte-exact follower of a file that may not exist yet. */
export interface TailHandle extends Disposable {
  /** bytes delivered so far, i.e. the offset to resume from */
  readonly offset: number;
  /** Deliver everything the file holds now, then resolve (used before comparing or closing a mirror). */
  drain(): Promise<void>;
}

/** A long-lived command whose stdout is delivered as it arrives (e.g. `nvidia-smi -lms 1000`). */
export interface StreamHandle {
  kill(): void;
  /** resolves with the exit code (null when killed by a signal) */
  readonly done: Promise<number | null>;
}

export interface StreamOptions {
  cwd?: string;
  env?: Record<string, string>;
  onStderr?: (chunk: Buffer) => void;
}

export interface Target {
  /** human label for the header: "local" or "user@host" */
  readonly label: string;
  readonly kind: 'local' | 'ssh';
  spawnPty(opts: SpawnPtyOptions): Promise<PtyHandle>;
  /** run argv to completion (no PTY) */
  exec(argv: string[], opts?: ExecOptions): Promise<ExecResult>;
  /** run argv without a PTY, delivering stdout chunks as they arrive */
  stream(argv: string[], onStdout: (chunk: Buffer) => void, opts?: StreamOptions): StreamHandle;
  readFile(path: string): Promise<Buffer | null>;
  writeFile(path: string, data: string | Buffer): Promise<void>;
  /**
   * append to a file (created when missing), where the target can without running a command: this
   * machine's files; elsewhere absent, and a caller appends with a command
   */
  appendFile?(path: string, data: string): Promise<void>;
  /** file names (not paths) in a directory; [] if it does not exist */
  listDir(path: string): Promise<string[]>;
  /** follow a file from an offset; chunk is raw bytes in order, never duplicated */
  tail(path: string, onChunk: (chunk: Buffer) => void, opts?: TailOptions): TailHandle;
  /** send a signal by name ('USR1', 'INT', 'KILL', ...) to a pid on the target */
  signal(pid: number, sig: string): Promise<void>;
  /** whether pid is alive on the target */
  isAlive(pid: number): Promise<boolean>;
  /** contents of /proc/PID/status on the target, or null */
  procStatus(pid: number): Promise<string | null>;
  close(): Promise<void>;
}

/**
 * A target whose processes live on several nodes (a Slurm job, `--hosts`) runs a command that
 * concerns a pid on that pid's node.
 */
export interface PidRouting {
  execForPid(pid: number, argv: string[]): Promise<ExecResult>;
  /** the node a pid runs on (null: not known yet) */
  nodeOfPid(pid: number): string | null;
}

/**
 * Pids grouped by where they run (one group per node of a run across nodes, one group otherwise):
 * what concerns many ranks is done with one command per group, not one per rank.
 */
export function groupByNode(target: Target, pids: number[]): number[][] {
  const routed = target as Partial<PidRouting>;
  if (typeof routed.nodeOfPid !== 'function') return pids.length ? [pids] : [];
  const groups = new Map<string, number[]>();
  for (const pid of pids) {
    const node = routed.nodeOfPid(pid) ?? '?';
    groups.set(node, [...(groups.get(node) ?? []), pid]);
  }
  return [...groups.values()];
}

/**
 * Whether this machine's /proc is a file read away for every pid of the run: a local target not
 * routed by node (the demo's simulated nodes are asked a command per node, as a cluster's are)
 */
export function procIsLocal(target: Target): boolean {
  return target.kind === 'local' && typeof (target as Partial<PidRouting>).nodeOfPid !== 'function';
}

/** run argv where `pid` lives: on its node when the target spans nodes, else on the target */
export function execForPid(target: Target, pid: number, argv: string[]): Promise<ExecResult> {
  const routed = target as Partial<PidRouting>;
  return typeof routed.execForPid === 'function' ? routed.execForPid(pid, argv) : target.exec(argv);
}
