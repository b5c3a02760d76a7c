/**
 * The box check as a notebook cell: a cell of kind 'check' made when the check starts, patched
 * with every box's checks when it ends. Pure (the clock and the lane snapshot are handed in), so
 * the cell's whole life is a unit test.
 */
import type { CheckRun } from '../preflight/format.js';
import type { CheckStatus } from '../preflight/types.js';
import type { Cell, LaneSnapshot } from './model.js';
import type { NewCell } from './reducer.js';

export const isCheckCell = (c: Pick<Cell, 'kind'>): boolean => c.kind === 'check';

/** a check cell for a check that is starting now; `parent`: the check cell it re-runs */
export function newCheckCell(o: {
  lane: LaneSnapshot;
  target: string;
  demo: boolean;
  now: Date;
  parent?: string;
}): NewCell {
  const at = o.now.toISOString();
  return {
    kind: 'check',
    ...(o.parent ? { parent: o.parent, link: 'rerun' as const } : {}),
    created: at,
    started: at,
    target: o.target,
    lane: o.lane,
    env: { ...o.lane.env },
    command: [],
    cwd: '',
    demo: o.demo,
    runId: '',
    runDir: '',
    evidenceDir: '',
    state: 'running',
    evidence: [],
    series: { loss: [], toks: [] },
  };
}

/** the check's result, as the cell keeps it */
export function checkedPatch(run: CheckRun, now: Date): Partial<Omit<Cell, 'id'>> {
  return {
    state: 'done',
    ended: now.toISOString(),
    go: run.go,
    verdict: run.verdict,
    reasons: [...run.reasons],
    check: {
      elapsedS: run.elapsedS,
      boxes: run.boxes.map((b) => ({ host: b.host, go: b.go, probeS: b.probeS, checks: b.checks })),
    },
  };
}

/** the check could not give a verdict (it could not connect, the notebook was closed) */
export function checkFailedPatch(why: string, now: Date): Partial<Omit<Cell, 'id'>> {
  return { state: 'failed', ended: now.toISOString(), go: false, reasons: [why] };
}

/** the notebook has recorded a cell (run or check) on this target: not a new box */
export function boxSeen(cells: readonly Cell[], target: string): boolean {
  return cells.some((c) => c.target === target);
}

export function checkCounts(c: Cell): Record<CheckStatus, number> {
  const n: Record<CheckStatus, number> = { pass: 0, warn: 0, fail: 0, skip: 0 };
  for (const b of c.check?.boxes ?? []) for (const k of b.checks) n[k.status]++;
  return n;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** "box check of local: 5 failed, 8 warnings, 12 passed (3.1 s)" */
export function checkLine(c: Cell): string {
  if (c.state === 'running') return `checking ${c.target}…`;
  if (!c.check) return `box check of ${c.target}: ${c.reasons?.[0] ?? 'no verdict'}`;
  const n = checkCounts(c);
  return `box check of ${c.target}: ${n.fail} failed, ${plural(n.warn, 'warning', 'warnings')}, ${n.pass} passed (${c.check.elapsedS.toFixed(1)} s)`;
}

/** the newest finished check cell of each target, in the order the targets were first checked */
export function latestChecks(cells: readonly Cell[]): Cell[] {
  const by = new Map<string, Cell>();
  for (const c of cells) if (isCheckCell(c) && c.state !== 'running') by.set(c.target, c);
  return [...by.values()];
}
