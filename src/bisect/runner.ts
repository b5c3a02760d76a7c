/**
 * A bisection run for real: ddmin's oracle is a trial run as a notebook cell (tagged with the
 * bisection), answered from an earlier cell with the same key when there is one, so nothing is run
 * twice, in this session or another. Endpoints already run (two marked cells) are used as they are.
 * The record in the notebook is updated after every observation, so the table is live.
 */
import type { Cell, Notebook } from '../notebook/model.js';
import type { NotebookAction } from '../notebook/reducer.js';
import { ddmin, type Observation, type Outcome, subsetKey } from './ddmin.js';
import { applyChanges, type Change, changesBetween, type Side } from './delta.js';
import type { BisectionRecord, CellBisect } from './model.js';
import { classOf, conclusionOf, outcomeFor } from './summary.js';

export interface BisectPort {
  notebook(): Notebook;
  dispatch(a: NotebookAction): Notebook;
  /** run one trial as a new cell (linked to `parent`); resolves with the cell once it has its verdict */
  runCell(req: { side: Side; tag: CellBisect; parent?: string }): Promise<Cell>;
  now?: () => Date;
}

export interface BisectEnd {
  lane: string;
  side: Side;
  /** a cell that already ran this side (used as its first observation) */
  cell?: Cell;
}

export interface BisectPlan {
  good: BisectEnd;
  bad: BisectEnd;
  /** the trial key: everything that decides a run besides the side (command, steps, target, ...) */
  keyOf(side: Side): string;
  target: string;
  steps?: number;
  budget?: number;
  repeat?: number;
  signal?: AbortSignal;
  onProgress?: (line: string) => void;
}

export class BisectAborted extends Error {
  constructor() {
    super('bisection stopped');
  }
}

export async function runBisection(port: BisectPort, plan: BisectPlan): Promise<BisectionRecord> {
  const changes: Change[] = changesBetween(plan.good.side, plan.bad.side);
  const repeat = Math.max(1, Math.floor(plan.repeat ?? 1));
  const now = () => (port.now?.() ?? new Date()).toISOString();
  const nb = port.dispatch({
    type: 'addBisection',
    bisection: {
      created: now(),
      state: 'running',
      good: { lane: plan.good.lane, ...(plan.good.cell ? { cell: plan.good.cell.id } : {}) },
      bad: { lane: plan.bad.lane, ...(plan.bad.cell ? { cell: plan.bad.cell.id } : {}) },
      target: plan.target,
      ...(plan.steps !== undefined ? { steps: plan.steps } : {}),
      ...(plan.budget !== undefined ? { budget: plan.budget } : {}),
      repeat,
      changes,
      trials: [],
    },
  });
  const id = nb.bisections![nb.bisections!.length - 1]!.id;
  const record = (): BisectionRecord => port.notebook().bisections!.find((b) => b.id === id)!;
  const update = (patch: Partial<BisectionRecord>) => port.dispatch({ type: 'updateBisection', id, patch });

  // the target class is the bad side's: ddmin observes the full set of changes first
  const all = subsetKey(changes.map((_, i) => i));
  let target: string | null = null;
  const trialIndex = new Map<string, number>();
  let parent = plan.good.cell?.id;

  const observe = (subset: readonly number[], cell: Cell, cached: boolean, outcome: Outcome) => {
    const k = subsetKey(subset);
    const trials = [...record().trials];
    let index = trialIndex.get(k);
    if (index === undefined) {
      index = trials.length;
      trialIndex.set(k, index);
      const fresh = { index, subset: [...subset].sort((a, b) => a - b), cells: [], cached: [], outcome };
      trials.push(fresh);
    }
    const t = trials[index]!;
    // repeats that disagree are flaky, and stay so
    const agreed = t.cells.length === 0 || t.outcome === outcome;
    trials[index] = {
      ...t,
      cells: [...t.cells, cell.id],
      cached: [...t.cached, cached],
      outcome: agreed ? outcome : 'flaky',
    };
    update({ trials });
    return index;
  };

  const oracle = async (subset: readonly number[], attempt: number, mayRun: boolean) => {
    if (plan.signal?.aborted) throw new BisectAborted();
    const side = applyChanges(
      plan.good.side,
      subset.map((i) => changes[i]!),
    );
    const key = plan.keyOf(side);
    const k = subsetKey(subset);
    // an endpoint that already ran (a marked cell) is its own first observation
    const seed = k === '' ? plan.good.cell : k === all ? plan.bad.cell : undefined;
    const earlier = port
      .notebook()
      .cells.filter(
        (c) => c.bisect?.key === key && c.state === 'done' && c.verdict !== undefined && c !== seed,
      );
    let cell = seed ? (attempt === 0 ? seed : earlier[attempt - 1]) : earlier[attempt];
    const cached = cell !== undefined;
    if (!cell) {
      if (!mayRun) return null;
      const index = trialIndex.get(k) ?? record().trials.length;
      const what =
        k === all ? 'bad' : subset.length ? subset.map((i) => changes[i]!.name).join(', ') : 'good';
      plan.onProgress?.(`trial ${index} (${what}): running`);
      cell = await port.runCell({ side, tag: { id, trial: index, key }, ...(parent ? { parent } : {}) });
      if (plan.signal?.aborted) throw new BisectAborted();
    }
    if (k === '' && !parent) parent = cell.id;
    const cls = classOf(cell);
    if (k === all && target === null) {
      target = cls;
      update({ verdictClass: cls });
    }
    // a bad side that is GO has no failure to find: the search ends as not reproduced
    const outcome: Outcome = target === 'pass' ? 'pass' : outcomeFor(target ?? cls, cls);
    const index = observe(subset, cell, cached, outcome);
    plan.onProgress?.(`trial ${index} ${cell.id}${cached ? ' (cached)' : ''}: ${cls} → ${outcome}`);
    return { outcome, ran: !cached, detail: cell.id } satisfies Observation<string>;
  };

  try {
    const r = await ddmin(changes.length, oracle, { budget: plan.budget, repeat });
    const result = { status: r.status, minimal: r.minimal, proven: r.proven, runs: r.runs, conclusion: '' };
    update({ state: 'done', ended: now(), result });
    update({ result: { ...result, conclusion: conclusionOf(port.notebook(), record()) } });
  } catch (e) {
    const stopped = e instanceof BisectAborted;
    update({ state: stopped ? 'stopped' : 'failed', ended: now(), error: (e as Error).message });
    if (!stopped) throw e;
  }
  return record();
}
