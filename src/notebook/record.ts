/**
 * `run --headless --notebook FILE`: the finished run becomes one cell. The run dir's command.json is
 * the record of what actually ran (argv, env, cwd), so the cell is built from it rather than from
 * the options that asked for the run.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { COMMAND_FILE } from '../ingest/launcher-files.js';
import type { Lane } from '../lanes/lane.js';
import type { RunSpec } from '../runs/launcher.js';
import { finishedPatch, type Outcome, startedCell } from './cell-build.js';
import type { Cell } from './model.js';
import type { NotebookStore } from './store.js';

export function readSpec(localDir: string): RunSpec {
  return JSON.parse(readFileSync(join(localDir, COMMAND_FILE), 'utf8')) as RunSpec;
}

export function recordRun(
  store: NotebookStore,
  o: {
    outcome: Outcome;
    lane: Lane;
    target: string;
    localDir: string;
  },
): Cell {
  const spec = readSpec(o.localDir);
  const cell = startedCell({
    spec,
    lane: o.lane,
    target: o.target,
    localDir: o.localDir,
    notebookDir: dirname(store.file),
  });
  const nb = store.dispatch({
    type: 'addCell',
    cell: { ...cell, ...finishedPatch(o.outcome, o.localDir, spec.env, new Date().toISOString()) },
  });
  return nb.cells[nb.cells.length - 1]!;
}
