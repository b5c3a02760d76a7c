/**
 * One shell that stays open per simulated node (the many-rank demo's `--nodes`): the node's
 * commands go through the same framed loop an SSH box's command shells use
 * (src/targets/ssh/command-shell.ts), so asking a simulated node costs what asking a real one
 * costs — a request line and the node's own `sh` — and not a fork of nsa-dbg's process per
 * command (at 256 ranks on 32 nodes those forks took most of the engine's CPU).
 * Requests run one at a time per node, in order; a shell that dies is opened again on the next
 * command.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { shInline } from '../util/sh-quote.js';
import {
  encodeRequest,
  MAX_SHELL_STDIN,
  ReplyReader,
  SHELL_LOOP,
  type ShellReply,
} from './ssh/command-shell.js';
import type { ExecResult } from './target.js';

const COMMAND_TIMEOUT_MS = 30_000;

interface Waiting {
  id: number;
  resolve: (r: ShellReply | null) => void;
}

class NodeShell {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly reader = new ReplyReader();
  private readonly waiting: Waiting[] = [];
  private nextId = 1;
  dead = false;

  constructor() {
    this.child = spawn('sh', ['-c', SHELL_LOOP], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (c: Buffer) => {
      for (const r of this.reader.push(c)) {
        const i = this.waiting.findIndex((w) => w.id === r.id);
        if (i >= 0) this.waiting.splice(i, 1)[0]!.resolve(r);
      }
      if (this.reader.broken) this.die();
    });
    this.child.stderr.resume();
    this.child.on('error', () => this.die());
    this.child.on('close', () => this.die());
    this.child.stdin.on('error', () => this.die());
  }

  /** whether the loop took request `id` (one it never took can be sent to a new shell) */
  took(id: number): boolean {
    return this.reader.started >= id;
  }

  /** the loop reads one request a line and answers in order: requests are written as they come */
  run(script: string): { id: number; reply: Promise<ShellReply | null> } {
    const id = this.nextId++;
    return { id, reply: this.dead ? Promise.resolve(null) : this.send(id, script) };
  }

  private send(id: number, script: string): Promise<ShellReply | null> {
    return new Promise((resolve) => {
      // a command that never ends (a /proc read of a process stuck in the kernel) would hold every
      // later one of this node: the shell is dropped, and those commands go elsewhere
      const timer = setTimeout(() => this.die(), COMMAND_TIMEOUT_MS);
      this.waiting.push({
        id,
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
      });
      this.child.stdin.write(encodeRequest(id, script));
    });
  }

  die(): void {
    if (this.dead) return;
    this.dead = true;
    for (const w of this.waiting.splice(0)) w.resolve(null);
    // TERM, not KILL: the loop's trap removes its temp folder (after a command still running)
    this.child.stdin.end();
    this.child.kill('SIGTERM');
  }
}

export class NodeShells {
  private readonly shells = new Map<string, NodeShell>();

  /** run argv on `node` through its shell; null when it could not run there */
  async run(node: string, argv: string[]): Promise<ExecResult | null> {
    // argv as one script the loop can run, in the shell it starts for it (no second one)
    const script = shInline(argv);
    if (argv.length === 0 || script.length > MAX_SHELL_STDIN) return null;
    let r: ShellReply | null = null;
    // a shell found dead (or dying under the request before its loop took it) is opened again once
    for (let attempt = 0; attempt < 2 && r === null; attempt++) {
      let shell = this.shells.get(node);
      if (shell === undefined || shell.dead) {
        shell = new NodeShell();
        this.shells.set(node, shell);
      }
      const sent = shell.run(script);
      r = await sent.reply;
      if (r === null && shell.took(sent.id)) return null;
    }
    if (r === null) return null;
    return { code: r.code, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
  }

  close(): void {
    for (const s of this.shells.values()) s.die();
    this.shells.clear();
  }
}
