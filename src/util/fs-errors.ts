/**
 * Filesystem failures said plainly: a notebook path that is a folder, a read-only mount, a full
 * disk. Node's own errors carry a code and usually the path, sometimes neither in words a user
 * reads (`EISDIR: illegal operation on a directory, read` names no file), and recursive mkdir on
 * a read-only mount reports ENOENT.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

const CAUSES: Record<string, string> = {
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  ENOENT: 'no such file or directory',
  EEXIST: 'it already exists',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  ENAMETOOLONG: 'the name is too long',
  ELOOP: 'too many symbolic links',
  EMFILE: 'too many open files',
  EBUSY: 'the file is busy',
  EIO: 'input/output error',
};

export function isFsError(e: unknown): e is NodeJS.ErrnoException {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return e instanceof Error && typeof code === 'string' && code in CAUSES;
}

/** what went wrong with a file, in words and with the code: `read-only file system (EROFS)` */
export function fsCause(e: NodeJS.ErrnoException): string {
  return `${CAUSES[e.code ?? ''] ?? e.message} (${e.code})`;
}

/** an expected failure on a file: one line naming the file and the cause (exit 2 in the CLI) */
export class FileError extends Error {
  constructor(
    readonly path: string,
    readonly code: string,
    what: string,
    cause: string,
  ) {
    super(`cannot ${what} ${path}: ${cause}`);
    this.name = 'FileError';
  }
}

/** `e` as a FileError about `path` when it is a filesystem failure; anything else unchanged */
export function fileError(e: unknown, path: string, what: string): unknown {
  if (e instanceof FileError || !isFsError(e)) return e;
  return new FileError(path, e.code!, what, fsCause(e));
}

/** a Node fs error that names its own path, as one line (for errors that reach the CLI unwrapped) */
export function describeFsError(e: NodeJS.ErrnoException): string | null {
  if (!e.path) return null;
  const what = e.syscall === 'mkdir' ? 'create the folder' : e.syscall ? `${e.syscall}` : 'use';
  return `cannot ${what} ${e.path}: ${fsCause(e)}`;
}

/** the nearest folder of `dir` that exists (at worst the root) */
function nearestExisting(dir: string): string {
  let d = dir;
  while (!existsSync(d) && dirname(d) !== d) d = dirname(d);
  return d;
}

/**
 * The real reason a recursive mkdir failed with ENOENT: on a read-only mount (or a folder without
 * write permission) Node reports ENOENT; creating the first missing folder alone says EROFS/EACCES.
 */
function trueMkdirError(dir: string, e: NodeJS.ErrnoException): NodeJS.ErrnoException {
  if (e.code !== 'ENOENT') return e;
  const parent = nearestExisting(dir);
  let first = dir;
  while (dirname(first) !== parent && dirname(first) !== first) first = dirname(first);
  try {
    mkdirSync(first);
  } catch (inner) {
    if (isFsError(inner) && inner.code !== 'EEXIST') return inner;
  }
  return e;
}

/** mkdir -p that reports why it failed (EROFS, EACCES) rather than Node's ENOENT */
export function mkdirpSync(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw isFsError(e) ? trueMkdirError(dir, e) : e;
  }
}

export async function mkdirp(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true }).catch((e) => {
    throw isFsError(e) ? trueMkdirError(dir, e) : e;
  });
}
