import { NotebookInUse } from '../notebook/lock.js';
import { NotebookFormatError } from '../notebook/migrate.js';
import { PresetError } from '../presets/preset.js';
import { ConnectFailure } from './remote.js';

/** Known failures become one clear line and an exit code; anything else is a bug and is rethrown. */
export function reportFailure(e: unknown): void {
  const err = e as Error;
  if (e instanceof ConnectFailure) {
    process.stderr.write(`nsa-dbg: ${err.message}\n`);
    process.exitCode = e.exitCode;
    return;
  }
  if (
    e instanceof PresetError ||
    e instanceof NotebookInUse ||
    e instanceof NotebookFormatError ||
    /unknown lane/.test(err?.message ?? '')
  ) {
    process.stderr.write(`nsa-dbg: ${err.message}\n`);
    process.exitCode = 2;
    return;
  }
  throw e;
}
