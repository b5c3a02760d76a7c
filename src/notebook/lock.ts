import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { atomicTempName, writeFileAtomic } from '../util/atomic-file.js';

/** a second process on one notebook: the user is told who holds it */
export class NotebookInUse extends Error {
  constructor(
    readonly file: string,
    readonly pid: number,
  ) {
    // pid 0: another process is taking over a stale lock at this very moment
    super(
      pid > 0
        ? `notebook ${file} is in use by pid ${pid} (close that nsa-dbg first)`
        : `notebook ${file} is being opened by another nsa-dbg (${file}.lock)`,
    );
    this.name = 'NotebookInUse';
  }
}

export interface NotebookLock {
  release(): void;
}

/** the process exists (EPERM: it exists but belongs to someone else) */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * What a lock file says: `<pid> <nonce>`. The nonce makes every lock one of a kind, so a process
 * can tell "the stale lock I saw" from a new lock of the same pid. (A lock of an older nsa-dbg is
 * `<pid>` alone.)
 */
interface Owner {
  text: string;
  pid: number;
  /** names the takeover of this very lock */
  tag: string;
}

function readOwner(file: string): Owner | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const [pid, nonce] = text.trim().split(/\s+/);
  const n = Number(pid);
  return { text, pid: Number.isInteger(n) && n > 0 ? n : 0, tag: nonce || `p${pid || 'x'}` };
}

/** a temp file beside `file` holding `text`, complete before anyone can see it under `file` */
function tempWith(file: string, text: string): string {
  const tmp = atomicTempName(file);
  const fd = openSync(tmp, 'wx', 0o644);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return tmp;
}

/**
 * Create `file` holding `text`, only if it does not exist: link(2) of a complete temp file, atomic
 * and failing with EEXIST, so nobody ever reads a lock that is created but still empty. File
 * systems without hard links get O_EXCL.
 */
function createExclusive(file: string, text: string): boolean {
  const tmp = tempWith(file, text);
  try {
    linkSync(tmp, file);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EOPNOTSUPP') throw e;
    try {
      const fd = openSync(file, 'wx', 0o644);
      writeSync(fd, text);
      closeSync(fd);
      return true;
    } catch (e2) {
      if ((e2 as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e2;
    }
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
  }
}

/** remove `file` if it still says `text` (only its owner, alive, ever changes a live lock) */
function removeIf(file: string, text: string): void {
  try {
    if (readFileSync(file, 'utf8') === text) unlinkSync(file);
  } catch {
    // already gone
  }
}

/** changed in the last few seconds */
function fresh(file: string): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs < 5_000;
  } catch {
    return false;
  }
}

type Taken = { held: true } | { held: false; owner: Owner | null };

/**
 * Take `file` for `me`, taking over a stale one (its pid dead) atomically under a race:
 *
 * - the lock is created only if it does not exist (createExclusive);
 * - a stale lock is replaced only by the one process that created `<file>.<its tag>` (the tag is
 *   that lock's own nonce), itself taken the same way, so a crashed taker is taken over in turn;
 * - the winner checks that the lock still is the stale one it saw, then renames its own over it
 *   (no moment without a lock), then removes the takeover file. A process that saw the stale lock
 *   and wins the takeover file only after that finds the lock changed and backs off.
 */
function take(file: string, me: string, depth = 0): Taken {
  for (let attempt = 0; attempt < 5; attempt++) {
    if (createExclusive(file, me)) return { held: true };
    const owner = readOwner(file);
    if (owner === null) continue; // released between our create and our read
    if (owner.text === me) return { held: true };
    // our own pid in it: a lock this process left (a store opened again), as good as stale
    if (owner.pid > 0 && owner.pid !== process.pid && alive(owner.pid)) return { held: false, owner };
    // no pid in it: a lock being written where hard links are missing (O_EXCL, then the write),
    // or one of an older nsa-dbg caught in that window; held while it is fresh
    if (owner.pid === 0 && (depth > 0 || fresh(file))) return { held: false, owner };
    if (depth > 4) return { held: false, owner: null };
    const takeover = `${file}.${owner.tag}`;
    const t = take(takeover, me, depth + 1);
    if (!t.held) return { held: false, owner: null };
    try {
      if (readOwner(file)?.text !== owner.text) continue; // someone replaced it first: look again
      writeFileAtomic(file, me, { durable: false }); // a lock need not outlive a power cut
      return { held: true };
    } finally {
      removeIf(takeover, me);
    }
  }
  return { held: false, owner: readOwner(file) };
}

/**
 * `<notebook>.lock` holds the owner's pid and a nonce. It is created only where none exists, and a
 * lock left by a process that no longer exists (killed, crashed) is taken over by exactly one of
 * the processes that find it (see take).
 */
export function acquireLock(notebookFile: string): NotebookLock {
  const file = `${notebookFile}.lock`;
  const me = `${process.pid} ${randomBytes(8).toString('hex')}\n`;
  const t = take(file, me);
  if (!t.held) throw new NotebookInUse(notebookFile, t.owner?.pid ?? 0);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      removeIf(file, me);
    },
  };
}
