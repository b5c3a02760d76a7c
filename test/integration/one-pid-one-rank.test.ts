/**
 * One process, one rank. A real Python trainer (test/fixtures/trainers/one_rank3.py) writes
 * `heartbeat_rank3.jsonl` (records with its pid, no `rank` key) and has no RANK in its environment:
 * nsa-dbg's stack hook registers in it with a guessed rank 0. The run has one rank, 3 — live, in
 * `analyze`, whichever of its files is read first — and `d` asks that rank, once, at its pid.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { localOpener } from '../../src/cli/open-session.js';
import { validateLane } from '../../src/lanes/lane.js';
import { analyzeDir } from '../../src/runs/analyze-dir.js';
import { LiveModel } from '../../src/session/live-model.js';
import type { Session } from '../../src/session/session.js';
import { runCli } from '../helpers/cli.js';
import { waitUntil } from '../helpers/wait.js';

const TRAINER = join(import.meta.dirname, '..', 'fixtures', 'trainers', 'one_rank3.py');
const work = mkdtempSync(join(tmpdir(), 'nsa-dbg-one-rank-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const LANE = `name: plain
description: one process, its rank in its heartbeat file's name
stepsFlag: ""
detector: { floorS: 3, spinConfirmS: 4, maxStepS: 60 }
stop: { halt: false, sigintWaitS: 5 }
acceptance: { finiteLoss: true, noStall: true }
`;

/** the stack log's header: the hook's registration */
function stackHeader(runDir: string): { rank: number; rank_var: string | null; pid: number } {
  const log = readdirSync(runDir).filter((f) => f.startsWith('nsa-dbg-stacks_'));
  expect(log).toHaveLength(1);
  return JSON.parse(
    readFileSync(join(runDir, log[0]!), 'utf8').split('\n')[0]!.replace('# nsa-dbg stacks ', ''),
  );
}

describe('a single process whose heartbeat file names rank 3', () => {
  let session: Session | null = null;
  afterEach(async () => {
    await session?.quit();
    session = null;
  });

  it('is one rank, 3, live and offline, whichever file is read first', async () => {
    const cwd = join(work, 'headless');
    mkdirSync(join(cwd, '.nsa-dbg', 'presets'), { recursive: true });
    writeFileSync(join(cwd, '.nsa-dbg', 'presets', 'plain.yaml'), LANE);
    const env = { NSA_DBG_HOME: join(cwd, 'home') };
    const args = ['run', '--headless', '--json', '--lane', 'plain', '--runs-dir', join(cwd, 'runs')];
    const run = await runCli([...args, '--', '/usr/bin/python3', '-u', TRAINER], {
      cwd,
      env,
      timeoutMs: 60_000,
    });
    expect(run.stderr).not.toMatch(/at .*\.js:\d+/);
    const live = JSON.parse(run.stdout.trim().split('\n').pop()!);
    expect(run.code).toBe(0);
    expect(live.ranks).toEqual([3]);
    expect(live.stepsReached).toBe(4);
    const an = await runCli(['analyze', live.runDir, '--json'], { cwd, env });
    expect(JSON.parse(an.stdout).ranks).toEqual([3]);

    // the hook guessed 0 for the process that beats as rank 3 (the same pid)
    const runDir = live.runDir as string;
    const hb = JSON.parse(readFileSync(join(runDir, 'heartbeat_rank3.jsonl'), 'utf8').split('\n')[0]!);
    const header = stackHeader(runDir);
    expect(header).toMatchObject({ rank: 0, rank_var: null, pid: hb.pid });

    // read file by file, the stack log before the heartbeats and after them: the same one rank
    const files = readdirSync(runDir).filter(
      (f) => f.startsWith('nsa-dbg-stacks_') || f.startsWith('heartbeat'),
    );
    for (const order of [files, [...files].reverse()]) {
      const model = new LiveModel({ probing: false });
      for (const f of order) model.onFileChunk(f, readFileSync(join(runDir, f)), Date.now());
      expect(model.evidence.result().ranks, order.join(' then ')).toEqual([3]);
      expect([...model.evidence.workers().keys()], order.join(' then ')).toEqual([3]);
      // whom `d` and the stall checks ask: rank 3, at its pid, and no rank 0
      expect([...model.rankPids], order.join(' then ')).toEqual([[3, hb.pid]]);
    }
  }, 90_000);

  it('`d` asks rank 3 once, at its pid, and files the dump with rank 3', async () => {
    const lane = validateLane(parse(LANE), 'plain.yaml');
    session = localOpener().open({
      lane: 'plain',
      demo: false,
      lanes: new Map([['plain', lane]]),
      command: ['/usr/bin/python3', '-u', TRAINER, '100000', '0.1'], // runs until the test quits
      runsRoot: join(work, 'live'),
      cwd: work,
      publishMs: 20,
    });
    const s = session;
    await s.start();
    const rank = await waitUntil(
      () => {
        const r = s.getState().ranks.find((x) => x.step >= 2 && x.pid !== undefined);
        return r ?? null;
      },
      { timeoutMs: 30_000, what: 'rank 3 beating' },
    );
    expect(rank.rank).toBe(3);
    const runDir = s.currentRun()!.spec.runDir;
    // the hook writes its log as Python starts, before the trainer's first heartbeat, and the session
    // polls it more often than heartbeats: with step 2 read, its registration has been read too
    await waitUntil(() => readdirSync(runDir).some((f) => f.startsWith('nsa-dbg-stacks_')), {
      what: 'the stack hook’s log',
    });
    expect(await s.requestDump()).toMatch(/asking 1 rank\(s\)/);
    const result = await waitUntil(
      async () => {
        const r = await analyzeDir(runDir);
        return r.dumpRequests.some((q) => q.purpose === 'user') && r.dumps.length > 0 ? r : null;
      },
      { timeoutMs: 30_000, what: 'the dump request' },
    );
    const user = result.dumpRequests.filter((q) => q.purpose === 'user');
    expect(user.map((q) => [q.rank, q.pid, q.outcome])).toEqual([
      [3, stackHeader(runDir).pid, 'faulthandler'],
    ]);
    expect(result.dumps.map((d) => d.rank)).toEqual([3]);
    expect(result.ranks).toEqual([3]);
    expect(s.getState().ranks.map((r) => r.rank)).toEqual([3]);
  }, 90_000);
});
