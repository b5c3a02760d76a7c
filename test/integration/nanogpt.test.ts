/**
 * Karpathy's nanoGPT, unpatched, on CPU torch (test/fixtures/trainers/nanogpt/): a trainer that
 * writes no heartbeats, has no SIGUSR1 handler and takes options only as --key=value. Its progress
 * is its `iter N: loss X, time Yms` lines, its stacks come from nsa-dbg's own faulthandler hook.
 * Each case is judged live (`run --headless`) and by `analyze` of the same run dir, alike.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { nanoGptCommand, nanoGptDir } from '../helpers/nanogpt.js';
import { waitUntil } from '../helpers/wait.js';

const dir = nanoGptDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// the bundled nanogpt lane with a shorter spin window, so a spin is confirmed in seconds
mkdirSync(join(dir, '.nsa-dbg', 'presets'), { recursive: true });
writeFileSync(
  join(dir, '.nsa-dbg', 'presets', 't-nano.yaml'),
  'name: t-nano\nstepsFlag: "--max_iters="\ndetector: { spinConfirmS: 8 }\nstop: { halt: false, sigintWaitS: 3 }\n',
);

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON, read field by field
type Json = Record<string, any>;

interface Outcome {
  code: number | null;
  live: Json;
  offline: Json;
  runDir: string;
  seconds: number;
}

async function run(
  name: string,
  opts: { iters: number; env?: Record<string, string>; during?: (runDir: string) => Promise<void> },
): Promise<Outcome> {
  const runs = join(dir, `runs-${name}`);
  const started = Date.now();
  let pid = 0;
  const done = runCli(
    [
      'run',
      '--headless',
      '--json',
      '--lane',
      't-nano',
      '--steps',
      String(opts.iters),
      '--runs-dir',
      runs,
      '--',
      ...nanoGptCommand(join(dir, `out-${name}`)),
    ],
    {
      cwd: dir,
      env: { NSA_DBG_HOME: join(dir, 'home'), ...opts.env },
      timeoutMs: 150_000,
      onSpawn: (p) => (pid = p),
    },
  );
  if (opts.during) {
    const runDir = join(runs, await firstRun(runs));
    await opts.during(runDir);
  }
  void pid;
  const r = await done;
  const seconds = (Date.now() - started) / 1000;
  expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  const live = JSON.parse(r.stdout.trim().split('\n').pop()!);
  const a = await runCli(['analyze', live.localDir, '--json'], { cwd: dir });
  return { code: r.code, live, offline: JSON.parse(a.stdout), runDir: live.localDir, seconds };
}

/** the run dir's name, once the run has one */
const firstRun = (runs: string) =>
  waitUntil(() => (existsSync(runs) ? readdirSync(runs)[0] : undefined), {
    timeoutMs: 30_000,
    what: 'a run dir',
  });

/** the fields live and offline must agree on */
const same = (o: Outcome) => {
  for (const k of ['verdict', 'stepsReached', 'stall', 'crash', 'nan', 'suspects', 'throughput', 'slowSteps'])
    expect(o.offline[k], k).toEqual(o.live[k]);
};

const iterSeen = (runDir: string, n: number) => () =>
  existsSync(join(runDir, 'stdout.log')) &&
  new RegExp(`^iter ${n}:`, 'm').test(readFileSync(join(runDir, 'stdout.log'), 'utf8'));

describe('nanoGPT under nsa-dbg (no heartbeats, no handler, --key=value)', () => {
  it('a clean run: --max_iters= passed, every iteration seen, toks/s from its own lines, GO', async () => {
    const o = await run('pass', { iters: 12 });
    expect(o.code).toBe(0);
    expect(o.live).toMatchObject({ verdict: 'pass', stepsReached: 12, go: true });
    expect(o.live.throughput.medianToksPerS).toBeGreaterThan(100);
    expect(o.live.digest.series.loss.length).toBe(13);
    const script = readFileSync(join(o.runDir, 'run.sh'), 'utf8');
    expect(script).toMatch(/ --max_iters=12[; ]/);
    expect(script).not.toContain('--steps');
    same(o);
  });

  it('SIGSTOPped at iteration 10: a hang, stuck, state T, stopped within a minute', async () => {
    let stoppedAt = 0;
    const o = await run('stop', {
      iters: 100000,
      during: async (runDir) => {
        await waitUntil(iterSeen(runDir, 10), { timeoutMs: 60_000 });
        const trainer = Number(readFileSync(join(runDir, 'pid'), 'utf8'));
        process.kill(trainer, 'SIGSTOP');
        stoppedAt = Date.now();
      },
    });
    expect(o.code).toBe(1);
    expect(o.live).toMatchObject({ verdict: 'hang', stall: { rank: 0, where: 'in-step', state: 'stuck' } });
    expect(o.live.stall.evidence.procState).toBe('T');
    expect(o.live.stall.step).toBeGreaterThanOrEqual(11);
    expect((Date.now() - stoppedAt) / 1000).toBeLessThan(60);
    same(o);
  });

  // NANO_HOOK_AT counts nanoGPT's clip calls: the 8th is iteration 7's
  it('spinning in iteration 7: a hang, stuck, with the frame in train.py (its stacks from the hook)', async () => {
    const o = await run('spin', { iters: 100000, env: { NANO_HOOK: 'spin', NANO_HOOK_AT: '8' } });
    expect(o.code).toBe(1);
    expect(o.live).toMatchObject({ verdict: 'hang', stall: { step: 7, state: 'stuck' } });
    expect(o.live.stall.frame.file).toMatch(/train\.py$/);
    expect(o.live.stall.why).toMatch(/^spinning/);
    expect(o.live.dumpRequests.every((r: { outcome: string }) => r.outcome === 'faulthandler')).toBe(true);
    same(o);
  });

  it('one iteration in a long native call: checked, busy, left alone past the spin window, GO', async () => {
    const o = await run('busy', {
      iters: 14,
      env: { NANO_HOOK: 'busy', NANO_HOOK_AT: '6', NANO_BUSY_S: '14' },
    });
    expect(o.code).toBe(0);
    expect(o.live.go).toBe(true);
    expect(['slow', 'pass']).toContain(o.live.verdict);
    expect(o.live.stepsReached).toBe(14);
    expect(o.live.suspects).toHaveLength(1);
    expect(o.live.suspects[0]).toMatchObject({ step: 5, state: 'busy' });
    expect(o.live.suspects[0].why).toMatch(/native code, in <module> \(.*train\.py:\d+\)/);
    expect(o.live.slowSteps.map((s: { step: number }) => s.step)).toContain(5);
    same(o);
  });

  it('headless ended by SIGTERM: the run is stopped, its exit recorded, the JSON printed (stopped)', async () => {
    let cli = 0;
    const runs = join(dir, 'runs-term');
    const done = runCli(
      [
        'run',
        '--headless',
        '--json',
        '--lane',
        't-nano',
        '--runs-dir',
        runs,
        '--',
        ...nanoGptCommand(join(dir, 'out-term'), 100000),
      ],
      { cwd: dir, env: { NSA_DBG_HOME: join(dir, 'home') }, timeoutMs: 60_000, onSpawn: (p) => (cli = p) },
    );
    const runDir = join(runs, await firstRun(runs));
    await waitUntil(iterSeen(runDir, 3), { timeoutMs: 60_000 });
    process.kill(cli, 'SIGTERM');
    const r = await done;
    expect(r.code).toBe(1);
    const live = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(live).toMatchObject({ verdict: 'stopped', go: false });
    expect(live.stepsReached).toBeGreaterThanOrEqual(3);
    expect(readFileSync(join(runDir, 'exit_code'), 'utf8').trim()).toBe('130');
  });
});
