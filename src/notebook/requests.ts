/**
 * Requests for new cells made from other cells (a re-run, an env edit), the words a queued
 * request goes by, and the command a new cell of a lane will run. Pure: the lanes, cells and the
 * CLI's command builder are handed in.
 */
import type { Lane } from '../lanes/lane.js';
import { shJoin } from '../util/sh-quote.js';
import type { NotebookDeps, StartRequest } from './controller-types.js';
import { envDiff, withEdits } from './env-diff.js';
import type { Cell } from './model.js';
import { MASK } from './secrets.js';

/** the env a new cell made from `cell` starts with: the lane's now, the cell's values on top */
export function envFrom(cell: Cell, lanes: Map<string, Lane>): Record<string, string> {
  const env = { ...(lanes.get(cell.lane.name)?.env ?? {}) };
  // a masked secret is not a value: the lane's (or the shell's) stands
  for (const [k, v] of Object.entries(cell.env)) if (v !== MASK) env[k] = v;
  return env;
}

export function rerunRequest(c: Cell, lanes: Map<string, Lane>): StartRequest {
  return { lane: c.lane.name, env: envFrom(c, lanes), parent: c.id, link: 'rerun', phase: c.phase };
}

/** `edits`: value null unsets */
export function editedRequest(
  c: Cell,
  edits: Record<string, string | null>,
  lanes: Map<string, Lane>,
): StartRequest {
  const env = withEdits(envFrom(c, lanes), edits);
  return { lane: c.lane.name, env, parent: c.id, link: 'toggle', phase: c.phase };
}

/** what a queued request is, for its row: "toggle of c2: NSA_USE_FA2=0", "" for a plain lane */
export function describeRequest(req: StartRequest, cells: readonly Cell[]): string {
  if (!req.parent) return '';
  const p = cells.find((c) => c.id === req.parent);
  const how = req.link === 'phase' ? `phase ${(req.phase ?? 0) + 1} after` : `${req.link ?? 'from'} of`;
  const d = p && req.env && req.link !== 'rerun' ? envDiff(p.env, req.env) : [];
  return `${how} ${req.parent}${d.length ? `: ${d.join(' ')}` : ''}`;
}

/**
 * What a new cell of this lane will run, and in which folder, as a shell would show it: a plain
 * `nsa-dbg` runs the lane's own command, else nsa-vibe's trainer, from the current folder.
 */
export function laneCommand(
  deps: Pick<NotebookDeps, 'commandFor' | 'steps'>,
  lane: Lane,
): { command: string; cwd: string } | null {
  const steps = lane.phases?.[0]?.steps ?? deps.steps;
  try {
    const c = deps.commandFor?.(lane, steps);
    return c ? { command: shJoin(c.argv), cwd: c.cwd } : null;
  } catch (e) {
    // a lane that refuses the command (its own torchrun around a torchrun typed in it): said in
    // the picker, not thrown at the whole notebook
    return { command: `refused: ${(e as Error).message}`, cwd: '' };
  }
}
