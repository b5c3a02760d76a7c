/**
 * The bisection's bookkeeping on a real notebook file: trials become tagged cells, a second
 * bisection (a new store, as in a later session) answers every trial from them, repeats that
 * disagree are recorded as flaky, and the conclusion names an interaction. The trial runs are
 * rules here; test/integration/bisect-demo.test.ts runs the real demo trainer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Side } from '../../../src/bisect/delta.js';
import { type BisectPlan, type BisectPort, runBisection } from '../../../src/bisect/runner.js';
import { bisectionJson, conclusionOf } from '../../../src/bisect/summary.js';
import { markdownSection, textTable } from '../../../src/bisect/table.js';
import { type Intended, proofOf } from '../../../src/notebook/run-proof.js';
import { NotebookStore } from '../../../src/notebook/store.js';
import { newCell } from '../notebook/cells.js';

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Rule = (env: Record<string, string>, run: number) => { verdict: string; go: boolean; step?: number };

/**
 * trials as rules; `seen`: what the trial's process sees of its env (a wrapper's doing), compared
 * with what it was meant to see as the session's /proc reading would be
 */
function port(
  store: NotebookStore,
  rule: Rule,
  seen: (env: Record<string, string>) => Record<string, string> = (env) => env,
): BisectPort & { runs: number } {
  const p = {
    runs: 0,
    notebook: () => store.get(),
    dispatch: (a: Parameters<BisectPort['dispatch']>[0]) => store.dispatch(a),
    runCell: async ({
      side,
      tag,
      parent,
      expect: intended,
    }: {
      side: Side;
      tag: { id: string; trial: number; key: string };
      parent?: string;
      expect?: Intended;
    }) => {
      const saw = seen(side.env);
      const v = rule(saw, p.runs++);
      const proof = proofOf(intended ?? { env: side.env }, [{ rank: 0, env: saw, argv: [] }]);
      const stall = v.verdict === 'hang' ? { step: v.step ?? 6, rank: 0, where: 'in-step' } : null;
      const nb = store.dispatch({
        type: 'addCell',
        cell: newCell('good', {
          env: side.env,
          state: 'done',
          verdict: v.verdict,
          go: v.go,
          bisect: tag,
          proof,
          ...(parent ? { parent, link: 'bisect' as const } : {}),
          summary: {
            stepsReached: stall ? stall.step - 1 : 8,
            firstLoss: null,
            lastLoss: null,
            minLoss: null,
            medianToksPerS: null,
            peakMemMiB: null,
            stall,
            nan: null,
            crash: null,
            line: v.verdict,
            exitCode: null,
          },
          analysis: stall ? { stall: { ...stall, frame: { function: '_forward_prefill_sequential' } } } : {},
        }),
      });
      return nb.cells[nb.cells.length - 1]!;
    },
  };
  return p;
}

const good: Side = { env: { A: '1', B: '0', C: '0', D: '0' }, args: [] };
const bad: Side = { env: { A: '0', B: '1', C: '1', D: '1' }, args: [] };
const plan = (o: Partial<BisectPlan> = {}): BisectPlan => ({
  good: { lane: 'good', side: good },
  bad: { lane: 'bad', side: bad },
  keyOf: (s) => JSON.stringify(s.env),
  target: 'local',
  ...o,
});
const hang = { verdict: 'hang', go: false };
const pass = { verdict: 'pass', go: true };

describe('runBisection', () => {
  it('records tagged trials, and a later session answers them all from the notebook', async () => {
    dir = mkdtempSync(join(tmpdir(), 'nsa-bisect-'));
    const file = join(dir, 'nb.json');
    const rule: Rule = (env) => (env.A === '0' ? hang : pass);
    let store = NotebookStore.open(file);
    const p1 = port(store, rule);
    const r1 = await runBisection(p1, plan());
    expect(r1.state).toBe('done');
    expect(r1.result).toMatchObject({ status: 'found', minimal: [0], proven: true, runs: p1.runs });
    expect(r1.verdictClass).toBe('hang');
    expect(conclusionOf(store.get(), r1)).toBe(
      'A 1→0 → hang at step 6 in-step (`_forward_prefill_sequential`); alone sufficient',
    );
    const cells = store.get().cells;
    expect(cells.every((c) => c.bisect?.id === r1.id)).toBe(true);
    // every trial after the good one is linked to it
    const goodCell = cells.find((c) => c.bisect?.trial === 1)!;
    expect(cells.filter((c) => c.bisect!.trial > 1).every((c) => c.parent === goodCell.id)).toBe(true);
    expect(textTable(store.get(), r1)[0]).toMatch(
      /^trial\s+cell\s+env delta vs good\s+verdict\s+steps\s+stall location$/,
    );
    expect(markdownSection(store.get(), r1).join('\n')).toContain(
      '| 0 | c1 | all 4 changes | hang | 5 | step 6 in-step (`_forward_prefill_sequential`) |',
    );
    store.close();

    store = NotebookStore.open(file);
    const p2 = port(store, () => {
      throw new Error('nothing should run');
    });
    const r2 = await runBisection(p2, plan());
    expect(r2.id).toBe('b2');
    expect(r2.result).toMatchObject({ minimal: [0], proven: true, runs: 0 });
    expect(r2.trials.every((t) => t.cached.every(Boolean))).toBe(true);
    const json = bisectionJson(store.get(), r2);
    expect(json).toMatchObject({
      minimal: [{ name: 'A', good: '1', bad: '0' }],
      proven: true,
      verdictClass: 'hang',
    });
    store.close();
  });

  it('an interaction of two flags is named as such', async () => {
    dir = mkdtempSync(join(tmpdir(), 'nsa-bisect-'));
    const store = NotebookStore.open(join(dir, 'nb.json'));
    const r = await runBisection(
      port(store, (env) => (env.B === '1' && env.D === '1' ? hang : pass)),
      plan(),
    );
    expect(r.result?.minimal).toEqual([1, 3]);
    expect(conclusionOf(store.get(), r)).toMatch(
      /^B 0→1 \+ D 0→1 → hang at step 6 .*; interaction: all 2 needed together, none of them can be dropped$/,
    );
    store.close();
  });

  it('a flaky culprit: every run is evidence, the posterior names it with counts and rates', async () => {
    dir = mkdtempSync(join(tmpdir(), 'nsa-bisect-'));
    const store = NotebookStore.open(join(dir, 'nb.json'));
    // D hangs one run in three (a fixed pattern: the test must replay the same way)
    const rule: Rule = (env, n) => (env.D === '1' && n % 3 === 0 ? hang : pass);
    const r = await runBisection(port(store, rule), plan({ maxRuns: 60 }));
    expect(r.result).toMatchObject({ status: 'found', minimal: [3], proven: true });
    expect(r.posterior!.culprits[0]).toMatchObject({ changes: [3] });
    expect(r.posterior!.culprits[0]!.posterior).toBeGreaterThanOrEqual(0.95);
    expect(r.posterior!.failureRate.culprit).toBeLessThan(0.9);
    // some subset with D was run more than once and disagreed
    expect(r.trials.some((t) => t.outcome === 'flaky' && t.subset.includes(3))).toBe(true);
    const json = bisectionJson(store.get(), r);
    expect(json.culprits[0]).toMatchObject({ changes: ['D'] });
    expect(json.status).toBe('found');
    expect(json.runs).toBe(r.result!.runs);
    expect(json.trials[0]).toMatchObject({ fails: expect.any(Number), passes: expect.any(Number) });
    expect(conclusionOf(store.get(), r)).toMatch(
      /^D 0→1 → hang at step 6 .*; alone sufficient; flaky: fails ~\d+ % of runs with it/,
    );
    expect(markdownSection(store.get(), r).join('\n')).toMatch(
      /Candidates \(posterior\):[\s\S]*D 0→1 +█+░* {2}0\.9\d/,
    );
    store.close();
  });

  it('a budget spent below the confidence is uncertain, with the likeliest candidate', async () => {
    dir = mkdtempSync(join(tmpdir(), 'nsa-bisect-'));
    const store = NotebookStore.open(join(dir, 'nb.json'));
    const rule: Rule = (env, n) => (env.D === '1' && n % 3 === 0 ? hang : pass);
    const r = await runBisection(port(store, rule), plan({ maxRuns: 6 }));
    expect(r.result).toMatchObject({ status: 'uncertain', proven: false, runs: 6 });
    expect(bisectionJson(store.get(), r).status).toBe('uncertain');
    expect(conclusionOf(store.get(), r)).toMatch(
      /; uncertain: posterior 0\.\d\d below the 0\.95 asked, after 6 runs/,
    );
    store.close();
  });

  it('a run whose process did not see its change is marked, excluded and reported', async () => {
    dir = mkdtempSync(join(tmpdir(), 'nsa-bisect-'));
    const store = NotebookStore.open(join(dir, 'nb.json'));
    // A is the culprit; a wrapper drops B from every process (it was meant to be 1 in some runs)
    const rule: Rule = (env) => (env.A === '0' ? hang : pass);
    const p = port(store, rule, (env) => {
      const { B: _dropped, ...seen } = env;
      return seen;
    });
    const r = await runBisection(p, plan());
    // the bad side cannot be run as meant: two runs show it, and nothing is blamed or cleared
    expect(r.result).toMatchObject({ status: 'not-reproduced', minimal: [], runs: 2 });
    const json = bisectionJson(store.get(), r);
    expect(json.notApplied).toEqual([
      { trial: 0, text: 'c1: change not applied: B (the process saw it unset)' },
      { trial: 0, text: 'c2: change not applied: B (the process saw it unset)' },
    ]);
    expect(json.neverApplied).toEqual([{ name: 'B', runs: 2, saw: 'B (the process saw it unset)' }]);
    expect(conclusionOf(store.get(), r)).toMatch(
      /^change not applied in any of its 2 runs: B \(the process saw it unset\); neither blamed nor cleared; /,
    );
    expect(textTable(store.get(), r)[1]).toMatch(/hang 0✗ 0✓ \(2 not applied\)/);
    store.close();
  });

  it('a good side that is not GO ends the search and says so', async () => {
    dir = mkdtempSync(join(tmpdir(), 'nsa-bisect-'));
    const store = NotebookStore.open(join(dir, 'nb.json'));
    const r = await runBisection(
      port(store, () => hang),
      plan(),
    );
    expect(r.result?.status).toBe('good-fails');
    expect(conclusionOf(store.get(), r)).toMatch(/^the good side is not GO \(hang\)/);
    store.close();
  });
});
