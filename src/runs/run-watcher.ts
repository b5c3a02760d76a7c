import { followPolls, isAppendOnlyFile, isFollowedFile } from '../ingest/run-files.js';
import type { TailHandle, Target } from '../targets/target.js';

/**
 * Follows every file of a run directory on any Target: new files are discovered by listing the
 * directory, and each is tailed from byte 0, so the engine sees every byte of the files it reads
 * (src/ingest/run-files.ts says which) exactly once, in order.
 */
export type WatchedFileFilter = (name: string) => boolean;

export class RunWatcher {
  private readonly tails = new Map<string, TailHandle>();
  private timer: NodeJS.Timeout | null = null;
  private listing = false;
  private stopped = false;
  private stopping: Promise<void> | null = null;
  /** listings in a row that found no new file */
  private quiet = 0;

  constructor(
    private readonly target: Target,
    private readonly dir: string,
    private readonly onChunk: (name: string, chunk: Buffer) => void,
    private readonly opts: { filter?: WatchedFileFilter; listEveryMs?: number; pollMs?: number } = {},
  ) {}

  start(): void {
    if (this.timer || this.stopped) return;
    void this.scan().finally(() => this.schedule());
  }

  /**
   * Listing every 250 ms while files appear; after 8 listings that found nothing new the gap
   * doubles up to 1 s: a run that writes no new file costs one directory read a second, and a new
   * dump is still seen within a second (the tails of files already found keep their own pace).
   */
  private schedule(): void {
    if (this.stopped) return;
    const every = this.opts.listEveryMs ?? 250;
    const gap = Math.min(Math.max(every, 1000), every * 2 ** Math.max(0, Math.min(2, this.quiet - 8)));
    this.timer = setTimeout(() => {
      const before = this.tails.size;
      void this.scan().finally(() => {
        this.quiet = this.tails.size === before ? this.quiet + 1 : 0;
        this.schedule();
      });
    }, gap);
    this.timer.unref?.();
  }

  async scan(): Promise<void> {
    if (this.listing) return;
    this.listing = true;
    try {
      const filter = this.opts.filter ?? isFollowedFile;
      const names = await this.target.listDir(this.dir);
      const pollMs = followPolls(names, this.opts.pollMs ?? 100);
      for (const name of names) {
        if (this.tails.has(name) || !filter(name)) continue;
        const t = this.target.tail(`${this.dir}/${name}`, (c) => this.onChunk(name, c), {
          pollMs: pollMs(name),
          appendOnly: isAppendOnlyFile(name),
        });
        this.tails.set(name, t);
      }
    } finally {
      this.listing = false;
    }
  }

  /**
   * One last listing and drain, then stop every tail. Once: a second stop (the run ended and its
   * session closed, both disposing) must not list again, or every file would be tailed anew from
   * byte 0 and its whole content delivered twice.
   */
  stop(): Promise<void> {
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  private async stopOnce(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.scan();
    for (const t of this.tails.values()) t.dispose();
    this.tails.clear();
  }
}
