import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

/** a second process on one notebook: the user is told who holds it */
export class NotebookInUse extends Error {
  constructor(
    readonly file: string,
    readonly pid: number,
  ) {
    // pid 0: the holder is between creating its lock file and writing its pid into it
    super(
      pid > 0
        ? `notebook ${file} is in use by pid ${pid} (close that nsa-dbg first)`
        : `notebook ${file} is being opened by another nsa-dbg (${file}.lock)`,
    );
    this.name = 'NotebookInUse';
  }
}

export interface NotebookLock {
  file: string;
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to someone else
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * `<notebook>.lock` holds the owner's pid, created with O_EXCL so two processes cannot both win.
 * A lock left by a process that no longer exists (killed, crashed) is taken over.
 */
export function acquireLock(notebookFile: string, pid = process.pid): NotebookLock {
  const file = `${notebookFile}.lock`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o644);
      writeSync(fd, `${pid}\n`);
      closeSync(fd);
      let released = false;
      return {
        file,
        release() {
          if (released) return;
          released = true;
          try {
            if (Number(readFileSync(file, 'utf8').trim()) === pid) unlinkSync(file);
          } catch {
            // already gone
          }
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let owner = Number.NaN;
    try {
      owner = Number(readFileSync(file, 'utf8').trim());
    } catch {
      continue; // removed between our open and read: try again
    }
    // an empty file is a holder between its open and its write: treat it as held
    if (!Number.isInteger(owner) || owner <= 0 || (owner !== pid && alive(owner)))
      throw new NotebookInUse(notebookFile, Number.isInteger(owner) ? owner : 0);
    try {
      unlinkSync(file); // stale: its process is gone
    } catch {
      // someone else cleaned it up first
    }
  }
  throw new Error(`cannot take the lock ${file}`);
}
