/**
 * torchrun typed in the command of a plain lane (no `launcher:`), as most users type it:
 * `nsa-dbg run --lane L -- python3 -m torch.distributed.run --standalone --nproc_per_node 3 …`.
 * The real gloo trainer (test/fixtures/trainers/ddp_ranks.py) stalls rank 2 inside its backward
 * while ranks 0 and 1 wait in DDP's all_reduce. torchrun's agent must be no rank (no stack log of
 * its pid, never signalled), each stack log must be a worker's with that worker's own rank, and the
 * stall must be blamed on rank 2 every time (it once went to rank 1 in 2 runs of 3: the agent stood
 * in for rank 0, and the real rank 0 never registered). Three runs, each checked whole.
 *
 * Under a lane that launches through torchrun itself, such a command is refused (torchrun around
 * torchrun would start an agent per rank).
 *
 * Needs /usr/bin/python3 with torch (Debian's python3-torch 1.13, whose torchrun takes
 * --redirects/--tee of 1 or 2 only). `--standalone` hosts its rendezvous on port 29400.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { DDP_TRAINER } from '../helpers/ddp-lane.js';

const work = mkdtempSync(join(tmpdir(), 'nsa-dbg-cmd-launcher-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** a plain lane: no launcher, the command is the user's */
const LANE = `name: plain
description: torchrun typed in the command
stepsFlag: ""
detector: { floorS: 3, spinConfirmS: 4, maxStepS: 60 }
stop: { halt: false, sigintWaitS: 5 }
acceptance: { finiteLoss: true, noStall: true }
`;

const TORCHRUN = ['/usr/bin/python3', '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node', '3'];

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON, read field by field
type Any = any;

async function stallRun(n: number): Promise<{ live: Any; offline: Any; runDir: string }> {
  const cwd = join(work, `run${n}`);
  mkdirSync(join(cwd, '.nsa-dbg', 'presets'), { recursive: true });
  writeFileSync(join(cwd, '.nsa-dbg', 'presets', 'plain.yaml'), LANE);
  const env = { NSA_DBG_HOME: join(cwd, 'home') };
  const cmd = [...TORCHRUN, '--redirects', '2', '--tee', '2', DDP_TRAINER, 'stall'];
  const args = [
    'run',
    '--headless',
    '--json',
    '--lane',
    'plain',
    '--runs-dir',
    join(cwd, 'runs'),
    '--',
    ...cmd,
  ];
  const run = await runCli(args, { cwd, env, timeoutMs: 150_000 });
  expect(run.stderr).not.toMatch(/at .*\.js:\d+/);
  expect(run.code).toBe(1);
  const live = JSON.parse(run.stdout.trim().split('\n').pop()!);
  const an = await runCli(['analyze', live.runDir, '--json'], { cwd, env });
  return { live, offline: JSON.parse(an.stdout), runDir: live.runDir };
}

/** each worker's pid and rank, as its own heartbeats say (ddp_ranks.py writes both) */
function heartbeatPids(runDir: string): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const f of readdirSync(runDir).filter((n) => /^heartbeat_rank\d+\.jsonl$/.test(n)))
    for (const line of readFileSync(join(runDir, f), 'utf8').trim().split('\n')) {
      const r = JSON.parse(line);
      byPid.set(r.pid, r.rank);
    }
  return byPid;
}

/** each stack log's pid and rank, from its header (the hook's registration) */
function stackLogPids(runDir: string): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const f of readdirSync(runDir).filter((n) => n.startsWith('nsa-dbg-stacks_'))) {
    const header = readFileSync(join(runDir, f), 'utf8').split('\n')[0]!;
    const h = JSON.parse(header.replace(/^# nsa-dbg stacks /, ''));
    byPid.set(h.pid, h.rank);
  }
  return byPid;
}

describe('torchrun typed in the command of a plain lane', () => {
  it('its agent is no rank; the workers are, each by its own RANK; rank 2’s stall is blamed on rank 2, three runs of three', async () => {
    for (const n of [1, 2, 3]) {
      const { live, offline, runDir } = await stallRun(n);
      const what = `run ${n}: ${JSON.stringify(live.stall)}`;
      const agent = Number(readFileSync(join(runDir, 'pid'), 'utf8').trim());
      const workers = heartbeatPids(runDir);
      expect([...workers.values()].sort(), what).toEqual([0, 1, 2]);
      expect(workers.has(agent), what).toBe(false);
      // the stack logs are the workers', each filed with the rank its heartbeats carry
      expect(stackLogPids(runDir), what).toEqual(workers);
      expect(
        readdirSync(runDir).some((f) => f.endsWith(`_pid${agent}.log`)),
        what,
      ).toBe(false);
      // the agent was never asked; every rank was, at its own pid
      expect(
        live.dumpRequests.map((r: Any) => r.pid),
        what,
      ).not.toContain(agent);
      for (const r of live.dumpRequests) expect(workers.get(r.pid), what).toBe(r.rank);
      // rank 0's stacks are the real rank 0's (in DDP's backward), not the agent's loop
      const rank0 = live.dumps.filter((d: Any) => d.rank === 0 && d.kind === 'faulthandler');
      expect(rank0.length, what).toBeGreaterThan(0);
      expect(rank0[0].mainThreadTop.function, what).toBe('backward');
      // the culprit
      expect(live.verdict, what).toBe('hang');
      expect(live.stall, what).toMatchObject({ rank: 2, step: 3 });
      expect(live.stall.rootCause, what).toMatchObject({ rank: 2, waiting: [0, 1] });
      expect(live.ranks).toEqual([0, 1, 2]);
      expect(offline.stall, what).toEqual(live.stall);
      expect(offline.ranks).toEqual([0, 1, 2]);
    }
  }, 450_000);
});

describe('torchrun typed in the command of a lane that launches through torchrun', () => {
  it('is refused before anything starts: one plain line, exit 2, no run dir', async () => {
    const cwd = join(work, 'twice');
    mkdirSync(join(cwd, '.nsa-dbg', 'presets'), { recursive: true });
    writeFileSync(
      join(cwd, '.nsa-dbg', 'presets', 'tr.yaml'),
      `${LANE.replace('name: plain', 'name: tr')}launcher: { torchrun: { nproc_per_node: 2 } }\n`,
    );
    const runs = join(cwd, 'runs');
    const env = { NSA_DBG_HOME: join(cwd, 'home') };
    const args = [
      'run',
      '--headless',
      '--json',
      '--lane',
      'tr',
      '--runs-dir',
      runs,
      '--',
      ...TORCHRUN,
      DDP_TRAINER,
    ];
    const r = await runCli(args, { cwd, env });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'nsa-dbg: the lane launches through torchrun already: give the training script after --, without torchrun (or run it on a lane without launcher:)',
    ]);
    expect(() => readdirSync(runs)).toThrow(/ENOENT/);
  });
});
