/**
 * Mirrors a run directory into a local evidence folder as the files grow, on any Target. Each remote
 * file is tailed and its bytes appended to the same relative path locally, so the local copy ends
 * byte-identical to the remote one; the engine sees the same bytes through onChunk.
 *
 * Resuming: the local file's size is the offset to resume from (it is exactly what was delivered,
 * even if the process died between an append and saving the state), and `.mirror-offsets.json`
 * records the offsets for humans and tools, written atomically.
 */

import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { followPolls, isTempFile, runFileKind } from '../ingest/run-files.js';
import type { TailHandle, Target } from '../targets/target.js';
import { writeFileAtomic } from '../util/atomic-file.js';
import { shQuote } from '../util/sh-quote.js';

export const MIRROR_STATE_FILE = '.mirror-offsets.json';

/** A file's size and modification time (epoch seconds), as `stat -c '%s %Y'` gives them. */
export interface FileMark {
  size: number;
  mtime: number;
}

export interface EvidenceMirrorOptions {
  /**
   * called after each chunk has been appended locally; `replace`: the chunk is the file's whole new
   * content (a small file rewritten in place, see `baseline`)
   */
  onChunk?: (relPath: string, chunk: Buffer, replace?: boolean) => void;
  /**
   * The directory's files as they were before the run started (a trainer's own out_dir, reused from
   * run to run): only what is written after that is this run's. A file that grows is mirrored from
   * its old size on; a small whole file (metrics.json, env.json, …) rewritten in place is copied
   * whole each time it changes; a file left as it was is not mirrored at all.
   */
  baseline?: Record<string, FileMark>;
  /** listing or catch-up failures (link down, ...); the mirror keeps going */
  onError?: (err: Error) => void;
  /** which names to mirror; default every file except temp files of atomic writes */
  filter?: (name: string) => boolean;
  listEveryMs?: number;
  pollMs?: number;
}

/** Temp files of atomic writes (`x.tmp-1234`, `x.tmp`) come and go; their final names are mirrored. */
export function defaultMirrorFilter(name: string): boolean {
  return !isTempFile(name) && name !== MIRROR_STATE_FILE;
}

/**
 * What an earlier nsa-dbg already mirrored into `localDir` (before a crash, a kill or a quit): each
 * non-empty file whole, in name order, to be read before the mirror resumes from the local sizes.
 * The mirror's own state is passed over, and the names `skip` says.
 */
export function* mirroredFiles(
  localDir: string,
  skip: (name: string) => boolean = () => false,
): Generator<[name: string, data: Buffer]> {
  if (!existsSync(localDir)) return;
  for (const name of readdirSync(localDir).sort()) {
    const p = join(localDir, name);
    if (name.startsWith('.mirror') || skip(name) || !statSync(p).isFile()) continue;
    const data = readFileSync(p);
    if (data.length > 0) yield [name, data];
  }
}

function safeName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\0');
}

interface Mirrored {
  tail: TailHandle;
  fd: number;
}

export class EvidenceMirror<T extends Target = Target> {
  private readonly files = new Map<string, Mirrored>();
  /** names found to be directories (never tailed) */
  private readonly skipped = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private saveTimer: NodeJS.Timeout | null = null;
  private scanning: Promise<void> | null = null;
  private closed = false;
  /** small files that were there before the run: their last seen mark (rewritten in place) */
  private readonly rewritten = new Map<string, FileMark>();

  constructor(
    readonly target: T,
    readonly remoteDir: string,
    readonly localDir: string,
    private readonly opts: EvidenceMirrorOptions = {},
  ) {}

  /** Begin mirroring: first listing now, then every listEveryMs. */
  async start(): Promise<void> {
    mkdirSync(this.localDir, { recursive: true });
    await this.scan();
    this.timer = setInterval(() => void this.scan(), this.opts.listEveryMs ?? 1000);
    this.timer.unref?.();
  }

  /** bytes mirrored so far, per relative path */
  offsets(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, m] of this.files) out[name] = m.tail.offset;
    return out;
  }

  /** List the directory once and start following files not seen before. */
  scan(): Promise<void> {
    if (!this.scanning) {
      this.scanning = this.doScan().finally(() => {
        this.scanning = null;
      });
    }
    return this.scanning;
  }

  private async doScan(): Promise<void> {
    if (this.closed) return;
    let names: string[];
    try {
      names = await this.target.listDir(this.remoteDir);
    } catch (err) {
      this.opts.onError?.(err as Error);
      return;
    }
    const filter = this.opts.filter ?? defaultMirrorFilter;
    const fresh = names
      .sort()
      .filter((n) => !this.files.has(n) && !this.skipped.has(n) && safeName(n) && filter(n));
    let folders: Set<string>;
    try {
      folders = await this.foldersAmong(fresh);
    } catch (err) {
      this.opts.onError?.(err as Error);
      return; // try again on the next listing
    }
    const pollMs = followPolls(names, this.opts.pollMs);
    for (const name of fresh) {
      if (this.closed || this.files.has(name)) continue;
      if (folders.has(name)) {
        this.skipped.add(name); // the layout is flat: subfolders (e.g. tensorboard) are not evidence
        continue;
      }
      const before = this.opts.baseline?.[name];
      if (before !== undefined && runFileKind(name) === 'whole') {
        if (!this.rewritten.has(name)) this.rewritten.set(name, before);
        continue;
      }
      if (!this.closed && !this.files.has(name)) this.follow(name, pollMs(name));
    }
    await this.copyRewritten();
  }

  /** which of these names are folders: one command for all of them, not one per name */
  private async foldersAmong(names: string[]): Promise<Set<string>> {
    if (names.length === 0) return new Set();
    const script = `cd ${shQuote(this.remoteDir)} && for f in "$@"; do [ -d "$f" ] && printf '%s\\0' "$f"; done; exit 0`;
    const r = await this.target.exec(['sh', '-c', script, 'sh', ...names]);
    if (r.code !== 0) throw new Error(`cannot look into ${this.remoteDir}: ${r.stderr.trim()}`);
    return new Set(r.stdout.split('\0').filter((n) => n !== ''));
  }

  /** small files that were there before the run and changed since: copied whole */
  private async copyRewritten(): Promise<void> {
    if (this.rewritten.size === 0 || this.closed) return;
    const names = [...this.rewritten.keys()];
    const r = await this.target
      .exec(['sh', '-c', `cd ${shQuote(this.remoteDir)} && stat -c '%s %Y %n' -- "$@"`, 'sh', ...names])
      .catch(() => null);
    if (r === null) return;
    for (const line of r.stdout.split('\n')) {
      const m = /^(\d+) (\d+) (.+)$/.exec(line);
      const name = m?.[3];
      const last = name === undefined ? undefined : this.rewritten.get(name);
      if (m === null || last === undefined || name === undefined) continue;
      const mark = { size: Number(m[1]), mtime: Number(m[2]) };
      if (mark.size === last.size && mark.mtime === last.mtime) continue;
      const content = await this.target.readFile(`${this.remoteDir}/${name}`).catch(() => null);
      if (content === null || this.closed) continue;
      this.rewritten.set(name, mark);
      const local = join(this.localDir, name);
      writeFileAtomic(local, content, { durable: false });
      this.opts.onChunk?.(name, content, true);
    }
  }

  private follow(name: string, pollMs: number | undefined): void {
    const localPath = join(this.localDir, name);
    const fd = openSync(localPath, 'a');
    // what is here already was delivered; a file that was there before the run: from its old size
    const fromOffset =
      (existsSync(localPath) ? statSync(localPath).size : 0) + (this.opts.baseline?.[name]?.size ?? 0);
    const tail = this.target.tail(
      `${this.remoteDir}/${name}`,
      (chunk) => {
        writeAll(fd, chunk);
        this.scheduleSave();
        this.opts.onChunk?.(name, chunk);
      },
      { fromOffset, ...(pollMs !== undefined ? { pollMs } : {}) },
    );
    this.files.set(name, { tail, fd });
  }

  /**
   * Bring every local file up to the remote's current size: one more listing, then each tail
   * catches up. Rejects when the target cannot be reached.
   */
  async flush(): Promise<void> {
    // a listing already under way may have read the folder before its newest file (the last probe
    // record, a dump) was created: let it finish, then list again
    await this.scanning;
    await this.scan();
    await Promise.all([...this.files.values()].map((m) => m.tail.drain()));
    this.saveNow();
  }

  /** Flush, then stop following and save the offsets. The remote files are left untouched. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush();
    } finally {
      this.closed = true;
      if (this.timer) clearInterval(this.timer);
      this.timer = null;
      for (const m of this.files.values()) m.tail.dispose();
      this.saveNow();
      for (const m of this.files.values()) closeSync(m.fd);
      this.files.clear();
    }
  }

  private scheduleSave(): void {
    if (this.saveTimer) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      this.saveNow();
    }, 250);
    this.saveTimer.unref?.();
  }

  private saveNow(): void {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = null;
    const state = { remoteDir: this.remoteDir, target: this.target.label, offsets: this.offsets() };
    const path = join(this.localDir, MIRROR_STATE_FILE);
    writeFileAtomic(path, `${JSON.stringify(state, null, 2)}\n`, { durable: false });
  }
}

function writeAll(fd: number, chunk: Buffer): void {
  let done = 0;
  while (done < chunk.length) done += writeSync(fd, chunk, done, chunk.length - done);
}
