import { NotebookInUse } from '../notebook/lock.js';
import { NotebookFormatError } from '../notebook/migrate.js';
import { PresetError } from '../presets/preset.js';
import { CommandNotFound, ScriptNotFound } from '../targets/find-command.js';
import { describeFsError, FileError, isFsError } from '../util/fs-errors.js';
import { ConnectFailure } from './remote.js';

/** NSA_DBG_DEBUG=1: an expected failure also shows where it came from (for bug reports). */
function debugStack(err: Error): void {
  if (process.env.NSA_DBG_DEBUG && process.env.NSA_DBG_DEBUG !== '0' && err?.stack)
    process.stderr.write(`${err.stack}\n`);
}

/** Known failures become one clear line and an exit code; anything else is a bug and is rethrown. */
export function reportFailure(e: unknown): void {
  const err = e as Error;
  if (e instanceof ConnectFailure) {
    process.stderr.write(`nsa-dbg: ${err.message}\n`);
    debugStack(err);
    process.exitCode = e.exitCode;
    return;
  }
  // a file that cannot be read or written (a folder where a file should be, a read-only mount)
  const fsLine = e instanceof FileError ? e.message : isFsError(e) ? describeFsError(e) : null;
  if (fsLine) {
    process.stderr.write(`nsa-dbg: ${fsLine}\n`);
    debugStack(err);
    process.exitCode = 2;
    return;
  }
  if (
    e instanceof CommandNotFound ||
    e instanceof ScriptNotFound ||
    e instanceof PresetError ||
    e instanceof NotebookInUse ||
    e instanceof NotebookFormatError ||
    /unknown lane|starts one torchrun agent per node/.test(err?.message ?? '')
  ) {
    process.stderr.write(`nsa-dbg: ${err.message}\n`);
    debugStack(err);
    process.exitCode = 2;
    return;
  }
  throw e;
}
