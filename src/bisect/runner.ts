/**
 * A bisection run for real: the search's oracle is a trial run as a notebook cell (tagged with the
 * bisection), answered from an earlier cell with the same key and run index when there is one, so
 * nothing is run twice, in this session or another. Endpoints already run (two marked cells) are
 * used as they are. Each run is checked against what its processes saw (the cell's proof): a run
 * whose process did not see its changes is recorded and is no evidence. The record in the notebook
 * is updated after every run, posterior included, so the table is live.
 */

import type { BisectionRecord, CellBisect, Change, Outcome } from '../notebook/bisection-record.js';
import type { Cell, Notebook } from '../notebook/model.js';
import type { NotebookAction } from '../notebook/reducer.js';
import { type Intended, proofLine } from '../notebook/run-proof.js';
import { applyChanges, changesBetween, type Side } from './delta.js';
import { neverApplied } from './proof.js';
import { DEFAULT_CONFIDENCE, DEFAULT_MAX_RUNS, flakySearch, type Observation, subsetKey } from './search.js';
import { classOf, conclusionOf, outcomeFor } from './summary.js';

export interface BisectPort {
  notebook(): Notebook;
  dispatch(a: NotebookAction): Notebook;
  /** run one trial as a new cell (linked to `parent`); resolves with the cell once it has its verdict */
  runCell(req: { side: Side; tag: CellBisect; parent?: string; expect?: Intended }): Promise<Cell>;
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
  /** stop once a candidate's posterior reaches this (default 0.95) */
  confidence?: number;
  /** most runs (default 60; `budget`, when given, too) */
  maxRuns?: number;
  signal?: AbortSignal;
  onProgress?: (line: string) => void;
}

/**
 * what a trial's processes must see: its delta, each applied change at its bad value. The changes it
 * leaves at the good side are not checked: a launcher that sets a variable the good side leaves
 * unset (torchrun's OMP_NUM_THREADS=1) changes the baseline of every trial alike, not what a trial
 * tests
 */
function intendedOf(changes: readonly Change[], subset: readonly number[]): Intended {
  const env: Intended['env'] = {};
  const options: NonNullable<Intended['options']> = {};
  for (const i of subset) {
    const c = changes[i]!;
    if (c.kind === 'env') env[c.name] = c.bad;
    else if (c.kind === 'arg') options[c.name] = c.bad;
  }
  return { env, ...(Object.keys(options).length ? { options } : {}) };
}

export class BisectAborted extends Error {
  constructor() {
    super('bisection stopped');
  }
}

export async function runBisection(port: BisectPort, plan: BisectPlan): Promise<BisectionRecord> {
  const changes: Change[] = changesBetween(plan.good.side, plan.bad.side);
  const repeat = Math.max(1, Math.floor(plan.repeat ?? 1));
  const maxRuns = Math.min(plan.maxRuns ?? DEFAULT_MAX_RUNS, plan.budget ?? Number.POSITIVE_INFINITY);
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
      confidence: plan.confidence ?? DEFAULT_CONFIDENCE,
      maxRuns,
      changes,
      trials: [],
    },
  });
  const id = nb.bisections![nb.bisections!.length - 1]!.id;
  const record = (): BisectionRecord => port.notebook().bisections!.find((b) => b.id === id)!;
  const update = (patch: Partial<BisectionRecord>) => port.dispatch({ type: 'updateBisection', id, patch });

  // the target class is the bad side's first failure: the search runs the full set of changes first
  const all = subsetKey(changes.map((_, i) => i));
  let target: string | null = null;
  const trialIndex = new Map<string, number>();
  let parent = plan.good.cell?.id;

  const observe = (
    subset: readonly number[],
    cell: Cell,
    cached: boolean,
    outcome: Outcome,
    applied: boolean,
  ) => {
    const k = subsetKey(subset);
    const trials = [...record().trials];
    let index = trialIndex.get(k);
    if (index === undefined) {
      index = trials.length;
      trialIndex.set(k, index);
      trials.push({
        index,
        subset: [...subset].sort((a, b) => a - b),
        cells: [],
        cached: [],
        applied: [],
        outcomes: [],
        outcome,
      });
    }
    const t = trials[index]!;
    const outcomes = [...(t.outcomes ?? []), outcome];
    const appliedList = [...(t.applied ?? []), applied];
    // runs that disagree make the subset flaky (runs that did not apply it say nothing)
    const kinds = new Set(outcomes.filter((_, i) => appliedList[i]));
    trials[index] = {
      ...t,
      cells: [...t.cells, cell.id],
      cached: [...t.cached, cached],
      applied: appliedList,
      outcomes,
      outcome: kinds.size > 1 ? 'flaky' : (kinds.values().next().value ?? outcome),
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
      plan.onProgress?.(`trial ${index} (${what}) run ${attempt + 1}: running`);
      cell = await port.runCell({
        side,
        tag: { id, trial: index, key },
        expect: intendedOf(changes, subset),
        ...(parent ? { parent } : {}),
      });
      if (plan.signal?.aborted) throw new BisectAborted();
    }
    if (k === '' && !parent) parent = cell.id;
    const cls = classOf(cell);
    // the class searched is the bad side's first that is not a clean pass (a flaky bad side may
    // pass first)
    if (k === all && target === null && cls !== 'pass') {
      target = cls;
      update({ verdictClass: cls });
    }
    const outcome: Outcome =
      target === null ? (cls === 'pass' ? 'pass' : 'unresolved') : outcomeFor(target, cls);
    const applied = (cell.proof?.notApplied.length ?? 0) === 0;
    const index = observe(subset, cell, cached, outcome, applied);
    const proof = applied ? '' : ` (${proofLine(cell.proof)}: not evidence)`;
    plan.onProgress?.(`trial ${index} ${cell.id}${cached ? ' (cached)' : ''}: ${cls} → ${outcome}${proof}`);
    return { outcome, ran: !cached, applied, detail: cell.id } satisfies Observation<string>;
  };

  try {
    const r = await flakySearch(changes.length, oracle, {
      maxRuns,
      repeat,
      confidence: plan.confidence,
      onPosterior: (p) => update({ posterior: p }),
    });
    // a bad side that never failed, its changes applied, was GO every time: nothing to search for
    const bad = record().trials[0];
    const allPassed = bad?.outcomes?.every((o, n) => o === 'pass' && bad.applied?.[n] !== false);
    if (r.status === 'not-reproduced' && target === null && allPassed) update({ verdictClass: 'pass' });
    const never = neverApplied(port.notebook(), record());
    const result = {
      status: r.status,
      minimal: r.minimal,
      proven: r.proven,
      runs: r.runs,
      conclusion: '',
      ...(never.length ? { neverApplied: never } : {}),
    };
    update({ state: 'done', ended: now(), result });
    update({ result: { ...result, conclusion: conclusionOf(port.notebook(), record()) } });
  } catch (e) {
    const stopped = e instanceof BisectAborted;
    update({ state: stopped ? 'stopped' : 'failed', ended: now(), error: (e as Error).message });
    if (!stopped) throw e;
  }
  return record();
}
