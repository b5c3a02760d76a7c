/**
 * Cells left `running` by an nsa-dbg that is gone (closed terminal, crash, kill): when the run has
 * ended since (its exit_code is there), judge it from its evidence with the same analysis and
 * acceptance as a live cell. A run on this machine whose process is gone without an exit_code
 * (nsa-dbg was killed and took the trainer with it) is judged the same way and marked interrupted:
 * it never comes back to say more. A run still going is left alone, to be opened (attached) from
 * the list.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { judge } from '../analysis/acceptance.js';
import { COMMAND_FILE, EXIT_CODE_FILE, PID_FILE, pidOf } from '../ingest/launcher-files.js';
import { analyzeDir } from '../runs/analyze-dir.js';
import { finishedPatch, resolveEvidenceDir } from './cell-build.js';
import { alive } from './lock.js';
import type { Cell } from './model.js';
import { readSpec } from './record.js';
import type { NotebookStore } from './store.js';

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** the newest modification among the run's files: about when it stopped */
function lastWrite(dir: string, names: string[]): string {
  let t = 0;
  for (const n of names) {
    try {
      t = Math.max(t, statSync(join(dir, n)).mtimeMs);
    } catch {
      // not there
    }
  }
  return new Date(t || Date.now()).toISOString();
}

/** how the cell's run ended, or null while it may still be going */
function ending(c: Cell, dir: string): { ended: string; interrupted: boolean } | null {
  const exitFile = join(dir, EXIT_CODE_FILE);
  if (existsSync(exitFile)) return { ended: statSync(exitFile).mtime.toISOString(), interrupted: false };
  // only this machine's processes can be looked at without a connection
  if (c.target !== 'local') return null;
  const pid = pidOf(readText(join(dir, PID_FILE)));
  if (pid !== null && alive(pid)) return null;
  return { ended: lastWrite(dir, ['stdout.log', PID_FILE, COMMAND_FILE]), interrupted: true };
}

/** the patch that finishes a cell left running, or null while its run may still be going */
async function recoveredPatch(c: Cell, notebookDir: string): Promise<Partial<Cell> | null> {
  if (c.kind === 'check') {
    // a box check has no run to go on: the nsa-dbg that ran it is gone, and so is its verdict
    const why = 'interrupted: nsa-dbg ended during the box check; re-run it to check again';
    return { state: 'failed', interrupted: true, go: false, reasons: [why] };
  }
  const dir = resolveEvidenceDir(notebookDir, c);
  const end = ending(c, dir);
  if (end === null) return null;
  let steps: number | undefined;
  try {
    steps = readSpec(dir).steps;
  } catch {}
  let r: Awaited<ReturnType<typeof analyzeDir>>;
  try {
    r = await analyzeDir(dir);
  } catch (e) {
    // nothing to judge (its folder is gone): the cell ends as an error, said why
    const why = `interrupted, and its evidence cannot be read: ${(e as Error).message}`;
    return { state: 'failed', interrupted: true, reasons: [why] };
  }
  const verdict = judge(r, { ...c.lane.acceptance }, steps);
  const patch = finishedPatch({ ...r, ...verdict }, dir, {}, end.ended);
  if (end.interrupted) {
    const why = 'interrupted: nsa-dbg ended while it ran and the trainer is gone; judged from its evidence';
    patch.interrupted = true;
    patch.reasons = [why, ...(patch.reasons ?? [])];
    if (patch.summary) patch.summary = { ...patch.summary, line: `${patch.summary.line} (interrupted)` };
  }
  return patch;
}

export async function recoverCells(store: NotebookStore): Promise<string[]> {
  const done: string[] = [];
  for (const c of store.get().cells) {
    if (c.state !== 'running') continue;
    const patch = await recoveredPatch(c, dirname(store.file));
    if (patch === null) continue;
    store.dispatch({ type: 'updateCell', id: c.id, patch });
    done.push(c.id);
  }
  return done;
}
