/**
 * The ranks of a Slurm job live on compute nodes that nsa-dbg does not log into: process facts and
 * signals reach them through `srun --overlap --jobid J -w NODE`, a step inside the job's own
 * allocation (Slurm ≥ 20.11), so the cluster's rules for who may touch what still hold. Everything
 * else (files on the shared filesystem, squeue, writing .HALT) goes to the target as before.
 * Signals only ever go to worker pids from the ranks' heartbeats: never to srun or a torchrun agent.
 */
import type {
  ExecResult,
  PtyHandle,
  SpawnPtyOptions,
  StreamHandle,
  StreamOptions,
  TailHandle,
  TailOptions,
  Target,
} from '../targets/target.js';

const PROC_PATH = /^\/proc\/(\d+)\//;
const SIGNAL_NAME = /^[A-Z0-9]+$/;

export class SrunTarget implements Target {
  readonly kind: Target['kind'];
  readonly label: string;

  constructor(
    private readonly base: Target,
    private readonly jobId: () => string | null,
    /** the node a worker pid runs on, null when it is not known (yet) */
    private readonly nodeOf: (pid: number) => string | null,
  ) {
    this.kind = base.kind;
    this.label = base.label;
  }

  /** run argv on the node of `pid` inside the job; null when the job or the node is not known */
  private async onNodeOf(pid: number, argv: string[]): Promise<ExecResult | null> {
    const job = this.jobId();
    const node = this.nodeOf(pid);
    if (job === null || node === null) return null;
    return this.base.exec(
      ['srun', '--overlap', '--jobid', job, '-w', node, '-N', '1', '-n', '1', '--quiet', ...argv],
      { timeoutMs: 30_000 },
    );
  }

  async readFile(path: string): Promise<Buffer | null> {
    const m = PROC_PATH.exec(path);
    if (m === null) return this.base.readFile(path);
    const r = await this.onNodeOf(Number(m[1]), ['cat', path]);
    return r !== null && r.code === 0 ? Buffer.from(r.stdout, 'utf8') : null;
  }

  async procStatus(pid: number): Promise<string | null> {
    const b = await this.readFile(`/proc/${pid}/status`);
    return b ? b.toString('utf8') : null;
  }

  async signal(pid: number, sig: string): Promise<void> {
    const name = sig.replace(/^SIG/, '');
    if (!SIGNAL_NAME.test(name)) throw new Error(`not a signal name: ${sig}`);
    const r = await this.onNodeOf(pid, ['kill', `-${name}`, String(pid)]);
    if (r === null) throw new Error(`pid ${pid}: its node in job ${this.jobId() ?? '?'} is not known yet`);
    if (r.code !== 0) throw new Error(`kill -${name} ${pid} on its node failed: ${r.stderr.trim()}`);
  }

  async isAlive(pid: number): Promise<boolean> {
    const r = await this.onNodeOf(pid, ['kill', '-0', String(pid)]);
    return r !== null && r.code === 0;
  }

  spawnPty(opts: SpawnPtyOptions): Promise<PtyHandle> {
    return this.base.spawnPty(opts);
  }
  exec(argv: string[], opts?: { cwd?: string; env?: Record<string, string>; timeoutMs?: number }) {
    return this.base.exec(argv, opts);
  }
  stream(argv: string[], onStdout: (chunk: Buffer) => void, opts?: StreamOptions): StreamHandle {
    return this.base.stream(argv, onStdout, opts);
  }
  writeFile(path: string, data: string | Buffer): Promise<void> {
    return this.base.writeFile(path, data);
  }
  listDir(path: string): Promise<string[]> {
    return this.base.listDir(path);
  }
  tail(path: string, onChunk: (chunk: Buffer) => void, opts?: TailOptions): TailHandle {
    return this.base.tail(path, onChunk, opts);
  }
  close(): Promise<void> {
    return this.base.close();
  }
}
