import { LaneError } from '../lanes/lane.js';
import { NotebookInUse } from '../notebook/lock.js';
import { NotebookFormatError } from '../notebook/migrate.js';
import { StepsConflict } from '../runs/build-spec.js';
import { CommandNotFound, ScriptNotFound } from '../targets/find-command.js';
import { describeFsError, FileError, isFsError } from '../util/fs-errors.js';
import { ConnectFailure } from './remote.js';

/** A usage error (flags that do not go together, a bad value): one line, exit status 2. */
export function usageError(msg: string): void {
  process.stderr.write(`nsa-dbg: ${msg}\n`);
  process.exitCode = 2;
}

/** Known failures become one clear line and an exit code; anything else is a bug and is rethrown. */
export function reportFailure(e: unknown): void {
  const err = e as Error;
  const known =
    e instanceof CommandNotFound ||
    e instanceof ScriptNotFound ||
    e instanceof LaneError ||
    e instanceof StepsConflict ||
    e instanceof NotebookInUse ||
    e instanceof NotebookFormatError ||
    /unknown lane|starts one torchrun agent per node|launches through torchrun already/.test(
      err?.message ?? '',
    );
  // a file that cannot be read or written (a folder where a file should be, a read-only mount)
  const fsLine = e instanceof FileError ? e.message : isFsError(e) ? describeFsError(e) : null;
  const line = e instanceof ConnectFailure ? err.message : fsLine || (known ? err.message : null);
  if (line === null) throw e;
  process.stderr.write(`nsa-dbg: ${line}\n`);
  // NSA_DBG_DEBUG=1: an expected failure also shows where it came from (for bug reports)
  if (process.env.NSA_DBG_DEBUG && process.env.NSA_DBG_DEBUG !== '0' && err?.stack)
    process.stderr.write(`${err.stack}\n`);
  process.exitCode = e instanceof ConnectFailure ? e.exitCode : 2;
}
