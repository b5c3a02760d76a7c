/**
 * Many ranks under a real torchrun: a small real DDP trainer (torch.distributed on gloo, CPU;
 * test/fixtures/trainers/ddp_ranks.py) launched by a torchrun lane, nsa-dbg driving it. The hang's
 * culprit and the crash's culprit must be the rank that caused it, not the first to fall silent or
 * the one torchrun observed first; dumps are filed per rank; torchrun (which does not forward
 * SIGUSR1 and would die of it) and a worker without a handler are never signalled.
 *
 * Needs /usr/bin/python3 with torch (Debian's python3-torch; .ci/run installs it). Torch 1.13 on
 * Python 3.11 rejects --redirects/--tee 0 and 3, so the lane passes 2 for both (stderr, with the
 * `[defaultN]:` prefix, to the console and to --log_dir).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { localOpener } from '../../src/cli/open-session.js';
import { validateLane } from '../../src/lanes/lane.js';
import { analyzeDir } from '../../src/runs/analyze-dir.js';
import type { Session } from '../../src/session/session.js';
import { LocalTarget } from '../../src/targets/local.js';
import { runCli } from '../helpers/cli.js';
import { DDP_TRAINER, ddpLane } from '../helpers/ddp-lane.js';
import { waitUntil } from '../helpers/wait.js';

const TRAINER = DDP_TRAINER;
const work = mkdtempSync(join(tmpdir(), 'nsa-dbg-torchrun-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const LANE = (env = '') =>
  ddpLane({ name: 't-ddp', description: 'three gloo ranks under torchrun', nproc: 3, sigintWaitS: 5, env });

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON, read field by field
type Any = any;
interface Json {
  [k: string]: Any;
}

async function headless(mode: string): Promise<{ code: number | null; live: Json; offline: Json }> {
  const cwd = join(work, mode);
  mkdirSync(join(cwd, '.nsa-dbg', 'presets'), { recursive: true });
  writeFileSync(join(cwd, '.nsa-dbg', 'presets', 't-ddp.yaml'), LANE());
  const env = { NSA_DBG_HOME: join(cwd, 'home') };
  const args = ['run', '--headless', '--json', '--lane', 't-ddp', '--runs-dir', join(cwd, 'runs')];
  const run = await runCli([...args, '--', 'python3', '-u', TRAINER, mode], { cwd, env, timeoutMs: 150_000 });
  expect(run.stderr).not.toMatch(/at .*\.js:\d+/);
  const live = JSON.parse(run.stdout.trim().split('\n').pop()!);
  const an = await runCli(['analyze', live.runDir, '--json'], { cwd, env });
  return { code: run.code, live, offline: JSON.parse(an.stdout) };
}

const launcherPid = (runDir: string) => Number(readFileSync(join(runDir, 'pid'), 'utf8').trim());

describe('many ranks under a real torchrun (gloo, CPU)', () => {
  it("torchrun rejecting its own options (--tee 3 on Debian's torch 1.13): the launcher failed, not training", async () => {
    const cwd = join(work, 'tee3');
    mkdirSync(join(cwd, '.nsa-dbg', 'presets'), { recursive: true });
    writeFileSync(
      join(cwd, '.nsa-dbg', 'presets', 't-ddp.yaml'),
      LANE().replace('args: ["--redirects", "2", "--tee", "2"]', 'args: ["--tee", "3"]'),
    );
    const env = { NSA_DBG_HOME: join(cwd, 'home') };
    const run = await runCli(
      [
        'run',
        '--headless',
        '--json',
        '--lane',
        't-ddp',
        '--runs-dir',
        join(cwd, 'runs'),
        '--',
        'python3',
        '-u',
        TRAINER,
        'ok',
      ],
      { cwd, env, timeoutMs: 60_000 },
    );
    const live = JSON.parse(run.stdout.trim().split('\n').pop()!);
    expect(run.code).toBe(1);
    expect(live.crash).toMatchObject({ basis: 'launcher-error', exception: 'AttributeError' });
    expect(live.reasons[0]).toMatch(/^the launcher failed before training/);
    expect(live.summary).toMatch(/not a training crash/);
  }, 90_000);

  it('a rank stalled in its backward while the others wait in the all_reduce: the stalled rank is named', async () => {
    const { code, live, offline } = await headless('stall');
    expect(code).toBe(1);
    expect(live.verdict).toBe('hang');
    expect(live.stall).toMatchObject({ rank: 2, step: 3 });
    expect(live.stall.rootCause).toMatchObject({ rank: 2, waiting: [0, 1] });
    expect(live.stall.rootCause.why).toMatch(/own code \(backward .*ddp_ranks\.py:\d+\)/);
    // every silent rank was asked at once through nsa-dbg's stack hook, which answers from C: ranks
    // 0 and 1, blocked in native code inside DDP's all_reduce, give their stacks too (in
    // backward, where the reducer waits); rank 2, in Python, also answers its own SIGUSR1
    const outcomes = (rank: number) =>
      live.dumpRequests.filter((r: Json) => r.rank === rank).map((r: Json) => r.outcome);
    for (const rank of [0, 1, 2]) expect(outcomes(rank)).toContain('faulthandler');
    expect(outcomes(0)).not.toContain('none-within-5s');
    expect(outcomes(1)).not.toContain('none-within-5s');
    expect(outcomes(2)).toContain('written');
    expect(outcomes(0)).not.toContain('written');
    const first = (rank: number) =>
      live.dumpRequests.find((r: Json) => r.rank === rank && r.outcome === 'faulthandler');
    // asked at the same moment, not one after another
    expect(Math.abs(first(0).at - first(2).at)).toBeLessThan(1);
    // every dump is filed with its rank: the hook's by its rank's log, the trainer's by its request
    expect(live.dumps.every((d: Json) => d.rank !== undefined)).toBe(true);
    const native = (rank: number) =>
      live.dumps.filter((d: Json) => d.rank === rank && d.kind === 'faulthandler');
    expect(native(0).length).toBeGreaterThan(0);
    expect(native(0)[0].mainThreadTop.function).toBe('backward');
    expect(live.stackDiff.noDump).toEqual([]);
    expect(live.stackDiff.groups.find((g: Json) => g.odd)).toMatchObject({ ranks: [2] });
    // torchrun was never signalled: no request to its pid, and it ended by the stop's SIGINT
    const runDir = live.runDir as string;
    const pids = new Set(live.dumpRequests.map((r: Json) => r.pid));
    expect(pids.has(launcherPid(runDir))).toBe(false);
    expect(pids.size).toBe(3);
    expect(readFileSync(join(runDir, 'stdout.log'), 'utf8')).not.toMatch(/got signal: 10/);
    // torchrun's per-rank logs went into the run dir
    expect(existsSync(join(runDir, 'torchrun-logs'))).toBe(true);
    // analyze of the folder agrees
    expect(offline.verdict).toBe('hang');
    expect(offline.stall, JSON.stringify({ offline: offline.stall, live: live.stall })).toEqual(live.stall);
  }, 200_000);

  it('a rank that crashes first while its peers die of the closed connection: that rank, not torchrun’s', async () => {
    const { code, live, offline } = await headless('crash');
    expect(code).toBe(1);
    expect(live.verdict).toBe('crash');
    expect(live.crash).toMatchObject({ rank: 2, step: 3, exception: 'ValueError', basis: 'first-exception' });
    expect(live.crash.frame).toMatchObject({ function: 'bad_batch' });
    expect(live.crash.consequences.map((c: Json) => c.rank)).toEqual([0, 1]);
    // the scenario: the culprit is slow to die, so torchrun's "first observed failure" is a peer
    expect(live.crash.torchrunRootCause).not.toBe(2);
    expect(offline.crash).toEqual(live.crash);
  }, 200_000);
});

describe('d on a live torchrun run', () => {
  let session: Session | null = null;
  afterEach(async () => {
    await session?.quit();
    session = null;
  });

  it('dumps every rank at once, each filed with its rank, also a worker without a SIGUSR1 handler (the hook is its handler), which lives on', async () => {
    const lane = validateLane(parse(LANE('env: { DDP_NO_HANDLER_RANK: "1" }')), 't-ddp.yaml');
    session = localOpener().open({
      lane: 't-ddp',
      demo: false,
      lanes: new Map([['t-ddp', lane]]),
      command: ['python3', '-u', TRAINER, 'ok', '100000'], // runs until the test quits
      runsRoot: join(work, 'live'),
      cwd: work,
      publishMs: 20,
    });
    const s = session;
    await s.start();
    const ranks = await waitUntil(
      () => {
        const r = s.getState().ranks.filter((x) => x.step >= 2 && x.pid !== undefined);
        return r.length === 3 ? r : null;
      },
      { timeoutMs: 60_000, what: 'three ranks beating' },
    );
    const pidOf = (rank: number) => ranks.find((r) => r.rank === rank)!.pid!;
    expect(await s.requestDump()).toMatch(/asking 3 rank\(s\)/);
    const asked = Date.now();
    const result = await waitUntil(
      async () => {
        // the run goes on: read its evidence folder as it stands (the same files the session reads)
        const r = await analyzeDir(s.currentRun()!.spec.runDir);
        return r.dumpRequests.filter((q) => q.purpose === 'user').length === 3 &&
          r.dumps.filter((d) => d.rank !== undefined).length >= 2
          ? r
          : null;
      },
      { timeoutMs: 30_000, what: 'a dump request per rank' },
    );
    // all three answered at once (within 2 s of the request), however their main threads were busy
    expect((Date.now() - asked) / 1000).toBeLessThan(8);
    const user = result.dumpRequests.filter((q) => q.purpose === 'user').sort((a, b) => a.rank - b.rank);
    expect(user.map((q) => [q.rank, q.pid, q.outcome])).toEqual([
      [0, pidOf(0), 'faulthandler'],
      [1, pidOf(1), 'faulthandler'],
      [2, pidOf(2), 'faulthandler'],
    ]);
    expect(Math.max(...user.map((q) => q.at)) - Math.min(...user.map((q) => q.at))).toBeLessThan(1);
    const byRank = new Map(result.dumps.map((d) => [d.file, d.rank]));
    for (const q of user) expect(byRank.get(q.file!)).toBe(q.rank);
    expect(new Set(user.map((x) => x.file)).size).toBe(3);
    const local = new LocalTarget();
    expect(await local.isAlive(pidOf(1))).toBe(true);
    // and it goes on training: its heartbeats move past the step it was at after the dump
    const stepNow = s.getState().ranks.find((r) => r.rank === 1)!.step;
    await waitUntil(() => s.getState().ranks.find((r) => r.rank === 1)!.step > stepNow + 2, {
      timeoutMs: 20_000,
      what: 'rank 1 still stepping',
    });
    expect(await local.isAlive(s.currentRun()!.pid!)).toBe(true);
  }, 200_000);
});
