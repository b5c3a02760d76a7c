/**
 * Older notebook files are brought up to NOTEBOOK_VERSION step by step when read (and written back
 * in the new form on the next change); a newer one is refused with a clear error, since this
 * version cannot know what its fields mean.
 *
 *   v0  no `version`; cells {id, lane: "name", runDir, verdict?, created}   (first prototype)
 *   v1  cells carry the lane snapshot, env, command, summary; series as {step, value} objects;
 *       no nextId, no evidenceDir (runDir was always a local path)
 *   v2  nextId, target, evidenceDir, series as [step, value] pairs; within v2, optional fields that
 *       older v2 files simply lack: `bisections`, and cells of `kind: 'check'` (a box check, its
 *       checks in `check`)
 */
import { NOTEBOOK_VERSION } from './model.js';

export class NotebookFormatError extends Error {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = 'NotebookFormatError';
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function v0to1(doc: Obj): Obj {
  const cells = (doc.cells as Obj[]).map((c) => ({
    id: c.id,
    created: c.created ?? '1970-01-01T00:00:00.000Z',
    lane: {
      name: String(c.lane ?? 'unknown'),
      description: '',
      source: '',
      sourceHash: '',
      env: {},
      args: [],
      acceptance: { finiteLoss: true, noStall: true },
    },
    env: {},
    command: [],
    cwd: '',
    runId: String(c.runDir ?? '')
      .split('/')
      .pop(),
    runDir: c.runDir ?? '',
    state: 'done',
    verdict: c.verdict,
    evidence: [],
    series: { loss: [], toks: [] },
  }));
  return { version: 1, created: doc.created ?? cells[0]?.created ?? '1970-01-01T00:00:00.000Z', cells };
}

const pairs = (s: unknown) =>
  Array.isArray(s) ? s.filter(isObj).map((p) => [Number(p.step), Number(p.value)] as [number, number]) : [];

function v1to2(doc: Obj): Obj {
  const cells = (doc.cells as Obj[]).map((c): Obj => {
    const series = isObj(c.series) ? c.series : {};
    return {
      ...c,
      target: c.target ?? 'local',
      demo: c.demo ?? false,
      evidenceDir: c.evidenceDir ?? c.runDir ?? '',
      series: { loss: pairs(series.loss), toks: pairs(series.toks) },
    };
  });
  const maxId = cells.reduce((m, c) => Math.max(m, Number(/^c(\d+)$/.exec(String(c.id))?.[1] ?? 0)), 0);
  return { ...doc, version: 2, nextId: maxId + 1, cells };
}

/**
 * Cell ids must be unique: Enter, a cell's parent link and the report find a cell by its id, so a
 * hand-edited file with two `c1` would open the first for the second. Every repeat after the first
 * gets the next unused id (the first keeps its own: links made before the edit most likely meant
 * it). The renames are returned so the opener can say so in one line.
 */
export function renumberDuplicateIds(doc: Obj): { doc: Obj; renamed: Array<[string, string]> } {
  const cells = doc.cells as Obj[];
  const seen = new Set<string>();
  const taken = new Set(cells.map((c) => String(c.id)));
  let next = Number(doc.nextId) || 1;
  const renamed: Array<[string, string]> = [];
  const out = cells.map((c) => {
    const id = String(c.id);
    if (!seen.has(id)) {
      seen.add(id);
      return c;
    }
    while (taken.has(`c${next}`)) next++;
    const fresh = `c${next++}`;
    taken.add(fresh);
    seen.add(fresh);
    renamed.push([id, fresh]);
    return { ...c, id: fresh };
  });
  if (!renamed.length) return { doc, renamed };
  // ids are never reused, so nextId moves past the ones just given
  return { doc: { ...doc, nextId: Math.max(Number(doc.nextId) || 1, next), cells: out }, renamed };
}

/** Parsed JSON of any known version → the current shape (validated enough to be used safely). */
export function migrate(doc: unknown, file: string): Obj {
  if (!isObj(doc) || !Array.isArray(doc.cells))
    throw new NotebookFormatError(file, 'not an nsa-dbg notebook (no "cells" list)');
  const version = doc.version === undefined ? 0 : doc.version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 0)
    throw new NotebookFormatError(file, `"version" must be a whole number, not ${JSON.stringify(version)}`);
  if (version > NOTEBOOK_VERSION)
    throw new NotebookFormatError(
      file,
      `notebook format version ${version} is newer than this nsa-dbg understands (${NOTEBOOK_VERSION}); upgrade nsa-dbg`,
    );
  let d: Obj = doc;
  if (version < 1) d = v0to1(d);
  if (version < 2) d = v1to2(d);
  (d.cells as unknown[]).forEach((c, i) => {
    if (!isObj(c) || typeof c.id !== 'string' || !isObj(c.lane) || typeof c.lane.name !== 'string')
      throw new NotebookFormatError(file, `cell ${i + 1} has no id or lane`);
    // a box check's checks are read by the view and the report: a hand-edited one must still be a list
    if (c.kind === 'check' && c.check !== undefined && !(isObj(c.check) && Array.isArray(c.check.boxes)))
      throw new NotebookFormatError(file, `cell ${i + 1} (${c.id}) is a box check without a "boxes" list`);
  });
  return d;
}
