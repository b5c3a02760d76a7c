/**
 * A resumable tail of a file on the box: poll it, read only the bytes past the delivered offset
 * (over SFTP, or `tail -c +N` on an exec channel when the box has no SFTP). The offset advances
 * only when a piece has been handed to the callback, and passes never overlap, so each byte is
 * delivered once and in order. When the link drops, the tail waits (without a time limit) for the
 * connection to come back and resumes from the same offset.
 */

import type { TailHandle } from '../target.js';
import type { SshConnection } from './connection.js';
import { HostKeyError, SshError } from './errors.js';
import type { FilesOverSsh } from './remote-files.js';

export interface RemoteTailOptions {
  fromOffset?: number;
  pollMs?: number;
  /** how long a drain() may wait for a down link */
  drainTimeoutMs?: number;
}

const WAIT_FOR_LINK_MS = 60_000;

export class RemoteTail implements TailHandle {
  private pos: number;
  private disposed = false;
  private chain: Promise<unknown> = Promise.resolve();
  private sleepTimer: NodeJS.Timeout | null = null;
  private wake: (() => void) | null = null;
  private readonly pollMs: number;
  private readonly drainTimeoutMs: number;

  constructor(
    private readonly conn: SshConnection,
    private readonly files: FilesOverSsh,
    private readonly path: string,
    private readonly onChunk: (chunk: Buffer) => void,
    opts: RemoteTailOptions = {},
  ) {
    this.pos = opts.fromOffset ?? 0;
    this.pollMs = opts.pollMs ?? 250;
    this.drainTimeoutMs = opts.drainTimeoutMs ?? 20_000;
    void this.loop();
  }

  get offset(): number {
    return this.pos;
  }

  /** Read up to the file's current end; rejects when the link stays down past the drain timeout. */
  drain(): Promise<void> {
    return this.serialize(() => this.pass(this.drainTimeoutMs)).then(() => undefined);
  }

  dispose(): void {
    this.disposed = true;
    if (this.sleepTimer) clearTimeout(this.sleepTimer);
    this.wake?.();
  }

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** One catch-up: read everything past the offset. Returns whether bytes arrived. */
  private async pass(linkWaitMs: number): Promise<boolean> {
    if (this.disposed) return false;
    const before = this.pos;
    await this.files.readFrom(
      this.path,
      this.pos,
      (piece) => {
        if (this.disposed) return;
        this.pos += piece.length;
        this.onChunk(piece);
      },
      linkWaitMs,
    );
    return this.pos > before;
  }

  private async loop(): Promise<void> {
    while (!this.disposed) {
      let gotBytes = false;
      try {
        gotBytes = await this.serialize(() => this.pass(WAIT_FOR_LINK_MS));
      } catch (err) {
        if (this.isFatal(err)) return; // connection closed for good: nothing to resume
      }
      if (!gotBytes) await this.sleep(Math.max(this.pollMs, this.files.minPollMs));
    }
  }

  private isFatal(err: unknown): boolean {
    if (err instanceof HostKeyError) return true;
    return err instanceof SshError && (err.kind === 'closed' || this.conn.state.state === 'closed');
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.sleepTimer = setTimeout(resolve, ms);
    });
  }
}
