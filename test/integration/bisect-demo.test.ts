/**
 * `nsa-dbg bisect` on the real demo trainer: batched-prefill (GO) against demo-many-flags (four
 * flags changed, one of which hangs step 6). The search finds NSA_PREFILL_BATCHED in at most five trials
 * (~30 s: the lane's quick confirm settings stop each stuck trial in seconds); a second bisection
 * on the same notebook runs nothing, every trial answered by the cells of the first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readNotebook } from '../../src/notebook/store.js';
import { runCli } from '../helpers/cli.js';

const work = mkdtempSync(join(tmpdir(), 'nsa-dbg-bisect-'));
const env = { NSA_DBG_HOME: join(work, 'home') };
const nbFile = join(work, 'bisect.json');
const args = ['bisect', '--demo', '--good', 'batched-prefill', '--bad', 'demo-many-flags', '--steps', '8'];
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('nsa-dbg bisect on the demo trainer', () => {
  it('finds the one flag that matters among four at the confidence, in no more trials than ddmin (five)', {
    timeout: 180_000,
  }, async () => {
    const r = await runCli([...args, '--notebook', nbFile, '--json'], { env, timeoutMs: 170_000 });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(out.minimal).toEqual([{ name: 'NSA_PREFILL_BATCHED', good: '1', bad: null }]);
    expect(out.proven).toBe(true);
    expect(out.verdictClass).toBe('hang');
    expect(out.conclusion).toBe(
      'NSA_PREFILL_BATCHED unset → hang at step 6 in-step (`_forward_prefill_sequential`); alone sufficient',
    );
    expect(out.changes.map((c: { name: string }) => c.name)).toEqual([
      'NSA_LOG_GRAD_NORM',
      'NSA_NVTX',
      'NSA_PREFILL_BATCHED',
      'NSA_SEL_RANGES_V2',
    ]);
    expect(out.trials.length).toBeLessThanOrEqual(5);
    expect(out).toMatchObject({ status: 'found', confidence: 0.95 });
    expect(out.culprits[0].changes).toEqual(['NSA_PREFILL_BATCHED']);
    expect(out.culprits[0].posterior).toBeGreaterThanOrEqual(0.95);
    // every trial's env was read from the demo trainer's own process and matched
    expect(out.notApplied).toEqual([]);
    expect(out.runs).toBe(out.trials.length);
    // every trial that hung was stopped at its stall, with the location in the table
    for (const t of out.trials)
      if (t.verdict === 'hang') expect(t.location).toBe('step 6 in-step (`_forward_prefill_sequential`)');
      else expect(t).toMatchObject({ verdict: 'pass', stepsReached: 8 });

    const nb = readNotebook(nbFile);
    expect(nb.bisections).toHaveLength(1);
    expect(nb.bisections![0]).toMatchObject({ id: 'b1', state: 'done', verdictClass: 'hang' });
    expect(nb.cells).toHaveLength(out.trials.length);
    for (const c of nb.cells) expect(c.bisect?.id).toBe('b1');
    // the noise flags reached the trainer and changed nothing
    const noisy = nb.cells.find((c) => c.env.NSA_NVTX === '1' && c.env.NSA_PREFILL_BATCHED === '1');
    expect(noisy?.go).toBe(true);

    // the report has the table and the conclusion
    const rep = await runCli(['report', nbFile, '-o', '-'], { env });
    expect(rep.stdout).toContain('## Flag Bisection');
    expect(rep.stdout).toMatch(
      /^\| \d+ \| c\d+ \| NSA_PREFILL_BATCHED unset \| hang \| 5 \| step 6 in-step/m,
    );
  });

  it('a second bisection on the same notebook answers every trial from it', async () => {
    const r = await runCli([...args, '--notebook', nbFile, '--json'], { env, timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(out.bisection).toBe('b2');
    expect(out.runs).toBe(0);
    expect(out.trials.every((t: { cached: boolean[] }) => t.cached.every(Boolean))).toBe(true);
    expect(out.minimal).toEqual([{ name: 'NSA_PREFILL_BATCHED', good: '1', bad: null }]);
    expect(readNotebook(nbFile).cells).toHaveLength(out.trials.length);
  });

  it('bad input is a usage error (exit 2) before anything runs', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--good', 'nope'], /give --good once/],
      [['--detector', 'floor=1'], /--detector: "floor=1" is not NAME=NUMBER/],
      [['--budget', '0'], /--budget must be a whole number ≥ 1/],
      [['--confidence', '1'], /--confidence must be a number between 0 and 1/],
      [['--max-runs', '0'], /--max-runs must be a whole number ≥ 1/],
      [['--', 'python3', 'x.py'], /either --demo or a command/],
    ];
    for (const [extra, msg] of cases) {
      const r = await runCli([...args, '--notebook', join(work, 'usage.json'), ...extra], { env });
      expect(r.code, extra.join(' ')).toBe(2);
      expect(r.stderr).toMatch(msg);
    }
    const unknown = await runCli(['bisect', '--demo', '--good', 'nope', '--bad', 'baseline'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown lane "nope"/);
    const same = await runCli(['bisect', '--demo', '--good', 'batched-prefill', '--bad', 'batched-prefill'], {
      env,
    });
    expect(same.code).toBe(2);
    expect(same.stderr).toMatch(/same env and args: nothing to bisect/);
  });
});
