/**
 * Is B really slower than A, on real runs: two demo cells whose steps are 100 ms and 103 ms (each
 * step ±10 % jitter, real sleeps, step lines timed as they arrive) are told apart by the compare's
 * 95 % interval, which holds the 3 %; the same configuration twice is "no difference detectable".
 * The cells are made by `run --headless --notebook`, as a CI loop over lanes would make them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareCells } from '../../src/notebook/compare.js';
import type { Cell } from '../../src/notebook/model.js';
import { readNotebook } from '../../src/notebook/store.js';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'nsa-ab-demo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cell(nb: string, stepMs: number): Promise<void> {
  const r = await runCli(
    [
      'run',
      '--headless',
      '--json',
      '--notebook',
      nb,
      '--demo',
      '--lane',
      'batched-prefill',
      '--steps',
      '160',
      '--step-ms',
      String(stepMs),
    ],
    { env: { NSA_DBG_HOME: join(dir, 'home') }, cwd: dir, timeoutMs: 90_000 },
  );
  expect(r.code, r.stderr).toBe(0);
}

/** a cell's mean step time, ms */
const meanMs = (c: Cell): number => {
  const ms = (c.series.stepMs ?? []).map(([, v]) => v);
  return ms.reduce((x, y) => x + y, 0) / ms.length;
};

describe('A/B on real demo runs', () => {
  it('100 ms against 103 ms a step: the interval excludes 0 and holds 3 %; the same twice: no difference', async () => {
    const nb = join(dir, 'ab.json');
    await cell(nb, 100);
    await cell(nb, 103);
    await cell(nb, 100);
    const [a, b, a2] = readNotebook(nb).cells;
    expect(a!.series.stepMs?.length).toBeGreaterThan(100);

    const apart = compareCells(a!, b!).ab[0]!;
    const m = /^step time: c2 (\d+\.\d) % longer than c1 \(95 % CI (\d+\.\d)–(\d+\.\d) %/.exec(apart);
    expect(m, apart).not.toBeNull();
    const [lo, hi] = [Number(m![2]), Number(m![3])];
    expect(lo).toBeGreaterThan(0);
    // the cells run one after another, and the box's load between them moves a cell's steps too
    // (CI once read 3.2 % and up for the 3 %, under the other tests' load): how far the two 100 ms
    // cells are apart is that drift, measured here, and the 3 % must lie within it of the interval
    const drift = Math.abs(meanMs(a2!) / meanMs(a!) - 1) * 100;
    expect(lo - drift, `${apart}; drift ${drift.toFixed(2)} %`).toBeLessThanOrEqual(3);
    expect(hi + drift, `${apart}; drift ${drift.toFixed(2)} %`).toBeGreaterThanOrEqual(3);

    const same = compareCells(a!, a2!).ab[0]!;
    expect(same).toMatch(/^step time: no difference detectable at ±\d+(\.\d)? %/);
  }, 300_000);
});
