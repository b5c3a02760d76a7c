/**
 * `:bisect` in the notebook, in real tmux on the real demo trainer: two cells (batched-prefill GO,
 * demo-many-flags NO-GO) are marked, `:bisect` searches their four env differences, the table fills
 * in as the trials run (each a cell linked to the good one) and the conclusion names the flag. The
 * marked cells are the endpoints, so only two trials run (~20 s); the candidates' posterior bars fill
 * in under the table.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readNotebook } from '../../src/notebook/store.js';
import { TmuxSession } from '../helpers/tmux.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'nsa-dbg');
let tmux: TmuxSession | null = null;
let dir = '';
afterEach(() => {
  tmux?.kill();
  tmux = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe(':bisect in the notebook', () => {
  it('two marked cells → :bisect → the table and the one-line conclusion', { timeout: 150_000 }, async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    dir = mkdtempSync(join(tmpdir(), 'nsa-e2e-bisect-'));
    tmux = new TmuxSession('bisect', 150, 40);
    tmux.start(`cd ${dir} && node ${BIN} --notebook nb.json --demo --steps 8`, {
      NSA_DBG_HOME: join(dir, 'home'),
    });
    const t = tmux;
    await t.waitFor((s) => s.includes('no cells yet'), 'empty notebook');

    t.type(':lane batched-prefill');
    t.key('Enter');
    await t.waitFor((s) => /c1\s+GO\s+batched-prefill\s+pass: 8 steps/.test(s), 'c1 passes', 40_000);
    t.type(':lane demo-many-flags');
    t.key('Enter');
    await t.waitFor((s) => /c2\s+NO-GO demo-many-flags\s+hang at step 6/.test(s), 'c2 hangs', 40_000);

    // without marks :bisect says what it needs
    t.type(':bisect');
    t.key('Enter');
    await t.waitFor((s) => s.includes('mark a GO cell and a NO-GO cell with m, then :bisect'), 'the hint');

    t.key('k');
    t.key('m');
    t.key('j');
    t.key('m');
    t.type(':bisect');
    t.key('Enter');
    await t.waitFor(
      (s) =>
        /bisect b1 · good c1 batched-prefill vs bad c2 demo-many-flags · class hang · 4 changes · running/.test(
          s,
        ),
      'the bisection view',
    );
    const done = await t.waitFor((s) => s.includes('alone sufficient'), 'the conclusion', 90_000);
    expect(done).toContain(
      'NSA_PREFILL_BATCHED unset → hang at step 6 in-step (`_forward_prefill_sequential`); alone sufficient',
    );
    expect(done).toMatch(/trial\s+cell\s+env delta vs good\s+verdict\s+steps\s+stall location/);
    // the marked cells are the endpoints: answered, not run again
    expect(done).toMatch(/0\s+c2 \(cached\)\s+all 4 changes\s+hang\s+5\s+step 6 in-step/);
    expect(done).toMatch(/1\s+c1 \(cached\)\s+\(good\)\s+pass\s+8/);
    expect(done).toMatch(
      /c\d+\s+NSA_PREFILL_BATCHED unset\s+hang\s+5\s+step 6 in-step \(_forward_prefill_sequential\)/,
    );
    expect(done).toMatch(/· done · 2 runs/);
    // the candidates with their posterior, the culprit's bar near full
    expect(done).toMatch(/NSA_PREFILL_BATCHED unset\s+█{25,}░*\s+0\.9\d/);
    expect(done).toMatch(
      /culprit fails ~\d+ % of its runs; background \d+ %; 4 runs as evidence; stop at 0\.95 or 60 runs/,
    );

    t.key('Escape');
    const list = await t.waitFor((s) => s.includes('j/k move') || /c4\s+NO-GO/.test(s), 'the list again');
    expect(list).toMatch(/c4 .*← bisect of c1: -NSA_PREFILL_BATCHED/);

    t.key('q');
    await t.waitFor((s) => s.includes('[app exited 0]'), 'clean exit', 15_000);
    expect(existsSync(join(dir, 'nb.json.lock'))).toBe(false);
    const nb = readNotebook(join(dir, 'nb.json'));
    expect(nb.bisections?.[0]).toMatchObject({
      id: 'b1',
      state: 'done',
      good: { lane: 'batched-prefill', cell: 'c1' },
      bad: { lane: 'demo-many-flags', cell: 'c2' },
      result: { minimal: [2], proven: true, runs: 2 },
    });
    expect(nb.cells.slice(2).map((c) => [c.parent, c.link, c.bisect?.id])).toEqual([
      ['c1', 'bisect', 'b1'],
      ['c1', 'bisect', 'b1'],
    ]);
  });
});
