/**
 * The ranks of a multi-node run live on nodes other than the one the session's target reaches:
 * process facts (/proc reads) and signals for a worker pid run on its node, everything else (the
 * run's files, squeue, the probe file) goes to the base target as before. How a command reaches a
 * node is the launch kind's business: `srun --overlap` inside a Slurm job's allocation
 * (src/slurm/srun-target.ts), or the host's own SSH connection for `--hosts` (src/hosts/).
 * Signals only ever go to worker pids from the ranks' heartbeats: never to srun or an agent.
 */
import type {
  ExecOptions,
  ExecResult,
  PidRouting,
  PtyHandle,
  SpawnPtyOptions,
  StreamHandle,
  StreamOptions,
  TailHandle,
  TailOptions,
  Target,
} from './target.js';

const PROC_PATH = /^\/proc\/(\d+)\//;
const SIGNAL_NAME = /^[A-Z0-9]+$/;

export class NodeRoutedTarget implements Target, PidRouting {
  readonly kind: Target['kind'];
  readonly label: string;

  constructor(
    protected readonly base: Target,
    /** run argv on a node; null when the node cannot be reached (yet) */
    private readonly runOnNode: (node: string, argv: string[]) => Promise<ExecResult | null>,
    /** the node a worker pid runs on, null when it is not known (yet) */
    private readonly nodeOf: (pid: number) => string | null,
    /** for messages: what the nodes belong to */
    private readonly what: () => string = () => 'the run',
    label = base.label,
  ) {
    this.kind = base.kind;
    this.label = label;
  }

  /** run argv on the node of `pid`; null when the node is not known */
  private async onNodeOf(pid: number, argv: string[]): Promise<ExecResult | null> {
    const node = this.nodeOf(pid);
    return node === null ? null : this.runOnNode(node, argv);
  }

  async readFile(path: string): Promise<Buffer | null> {
    const m = PROC_PATH.exec(path);
    if (m === null) return this.base.readFile(path);
    const r = await this.onNodeOf(Number(m[1]), ['cat', path]);
    return r !== null && r.code === 0 ? Buffer.from(r.stdout, 'utf8') : null;
  }

  async procStatus(pid: number): Promise<string | null> {
    return (await this.readFile(`/proc/${pid}/status`))?.toString('utf8') ?? null;
  }

  async signal(pid: number, sig: string): Promise<void> {
    const name = sig.replace(/^SIG/, '');
    if (!SIGNAL_NAME.test(name)) throw new Error(`not a signal name: ${sig}`);
    const r = await this.onNodeOf(pid, ['kill', `-${name}`, String(pid)]);
    if (r === null) throw new Error(`pid ${pid}: its node in ${this.what()} is not known yet`);
    if (r.code !== 0) throw new Error(`kill -${name} ${pid} on its node failed: ${r.stderr.trim()}`);
  }

  nodeOfPid(pid: number): string | null {
    return this.nodeOf(pid);
  }

  async execForPid(pid: number, argv: string[]): Promise<ExecResult> {
    const r = await this.onNodeOf(pid, argv);
    return r ?? { code: 1, stdout: '', stderr: `pid ${pid}: its node in ${this.what()} is not known yet` };
  }

  async isAlive(pid: number): Promise<boolean> {
    const r = await this.onNodeOf(pid, ['kill', '-0', String(pid)]);
    return r !== null && r.code === 0;
  }

  spawnPty(opts: SpawnPtyOptions): Promise<PtyHandle> {
    return this.base.spawnPty(opts);
  }
  async exec(argv: string[], opts?: ExecOptions): Promise<ExecResult> {
    // `py-spy dump --pid N` reads a process from outside: it must run where the process is
    const pid = argv[0] === 'py-spy' ? Number(argv[argv.indexOf('--pid') + 1]) : Number.NaN;
    if (Number.isInteger(pid) && pid > 0) {
      const r = await this.onNodeOf(pid, argv);
      return r ?? { code: 1, stdout: '', stderr: `pid ${pid}: its node is not known yet` };
    }
    return this.base.exec(argv, opts);
  }
  stream(argv: string[], onStdout: (chunk: Buffer) => void, opts?: StreamOptions): StreamHandle {
    return this.base.stream(argv, onStdout, opts);
  }
  get appendFile(): Target['appendFile'] {
    return this.base.appendFile?.bind(this.base);
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
