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
}

/** A byte-exact follower of a file that may not exist yet. */
export interface TailHandle extends Disposable {
  /** bytes delivered so far, i.e. the offset to resume from */
  readonly offset: number;
  /**
   * Deliver everything the file holds now, then resolve (used before comparing or closing a mirror).
   * Optional: a caller without it can poll `offset` against the file's size.
   */
  drain?(): Promise<void>;
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
  exec(
    argv: string[],
    opts?: { cwd?: string; env?: Record<string, string>; timeoutMs?: number },
  ): Promise<ExecResult>;
  /** run argv without a PTY, delivering stdout chunks as they arrive */
  stream(argv: string[], onStdout: (chunk: Buffer) => void, opts?: StreamOptions): StreamHandle;
  readFile(path: string): Promise<Buffer | null>;
  writeFile(path: string, data: string | Buffer): Promise<void>;
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
