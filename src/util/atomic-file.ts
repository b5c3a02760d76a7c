/**
 * The one way this machine's files are replaced whole: the notebook, the report, the local target's
 * writes, a mirror's copies and its state, the `--hosts` follower's exit status. A reader (or a crash
 * at any instant) sees the old file or the new one, never a mix: the data goes to a temp file in the
 * same folder (one name scheme, which run-files.ts's isTempFile knows), then is renamed over the
 * target (atomic within one file system). `durable`: the temp file is fsynced before the rename and
 * the folder after it, so the rename survives a power cut (the notebook and its report); a mirror's
 * copy is re-fetched anyway and skips the cost.
 */
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
  /** fsync the data and the folder (default true) */
  durable?: boolean;
}

let seq = 0;
/** `.NAME.PID.SEQ.tmp` beside `path`: hidden, unique within and across processes, ends in `.tmp` */
export function atomicTempName(path: string): string {
  seq = (seq + 1) % 1_000_000;
  return join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now().toString(36)}${seq}.tmp`);
}

/** `name` is one of atomicTempName(`path`)'s temp files (not another file's whose name extends it) */
export function isTempNameOf(path: string, name: string): boolean {
  const prefix = `.${basename(path)}.`;
  return name.startsWith(prefix) && /^\d+\.[0-9a-z]+\.tmp$/.test(name.slice(prefix.length));
}

function fsyncFolder(dir: string): void {
  try {
    const dfd = openSync(dir, 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    // some file systems refuse fsync on a directory; the rename has still happened
  }
}

/** Replace `path` with `data`, whole or not at all. */
export function writeFileAtomic(path: string, data: string | Buffer, o: AtomicWriteOptions = {}): void {
  const durable = o.durable ?? true;
  const dir = dirname(path);
  const tmp = atomicTempName(path);
  const fd = openSync(tmp, 'wx', 0o644);
  try {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    if (durable) fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkSync(tmp);
    throw e;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (e) {
    unlinkSync(tmp);
    throw e;
  }
  if (durable) fsyncFolder(dir);
}
