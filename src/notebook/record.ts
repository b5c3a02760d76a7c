/**
 * `run --headless --notebook FILE`: the finished run becomes one cell. The run dir's command.json is
 * the record of what actually ran (argv, env, cwd), so the cell is built from it rather than from
 * the options that asked for the run.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { COMMAND_FILE } from '../ingest/launcher-files.js';
import type { RunSpec } from '../runs/launcher.js';
import { finishedPatch, type Outcome, type StartFacts, startedCell } from './cell-build.js';
import type { Cell } from './model.js';
import type { NotebookStore } from './store.js';

export function readSpec(localDir: string): RunSpec {
  return JSON.parse(readFileSync(join(localDir, COMMAND_FILE), 'utf8')) as RunSpec;
}

export function recordRun(
  store: NotebookStore,
  o: Pick<StartFacts, 'lane' | 'target' | 'localDir'> & { outcome: Outcome },
): Cell {
  const { outcome, ...facts } = o;
  const spec = readSpec(o.localDir);
  const cell = startedCell({ ...facts, spec, notebookDir: dirname(store.file) });
  const nb = store.dispatch({
    type: 'addCell',
    cell: { ...cell, ...finishedPatch(outcome, o.localDir, spec.env, new Date().toISOString()) },
  });
  return nb.cells[nb.cells.length - 1]!;
}
