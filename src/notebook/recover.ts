/**
 * Cells left `running` by an nsa-dbg that is gone (closed terminal, crash, kill): when the run has
 * ended since (its exit_code is there), judge it from its evidence with the same analysis and
 * acceptance as a live cell; a run still going is left alone, to be opened (attached) from the list.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { judge } from '../analysis/acceptance.js';
import { analyzeDir } from '../analysis/analyze-dir.js';
import { finishedPatch, resolveEvidenceDir } from './cell-build.js';
import type { NotebookStore } from './store.js';

export async function recoverCells(store: NotebookStore): Promise<string[]> {
  const done: string[] = [];
  for (const c of store.get().cells) {
    if (c.state !== 'running') continue;
    const dir = resolveEvidenceDir(dirname(store.file), c);
    const exitFile = join(dir, 'exit_code');
    if (!existsSync(exitFile)) continue;
    let steps: number | undefined;
    try {
      steps = (JSON.parse(readFileSync(join(dir, 'command.json'), 'utf8')) as { steps?: number }).steps;
    } catch {
      steps = undefined;
    }
    const r = await analyzeDir(dir);
    const verdict = judge(r, { ...c.lane.acceptance }, steps);
    const ended = statSync(exitFile).mtime.toISOString();
    store.dispatch({
      type: 'updateCell',
      id: c.id,
      patch: finishedPatch({ ...r, ...verdict }, dir, {}, ended),
    });
    done.push(c.id);
  }
  return done;
}
