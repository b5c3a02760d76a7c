/**
 * `nsa-dbg bisect` of a torchrun lane, end to end against a real torchrun: two gloo ranks of the
 * small DDP trainer (test/fixtures/trainers/ddp_ranks.py) on CPU. The good lane runs it as it is;
 * the bad lane differs in env alone: DDP_MODE=stall (the last rank hangs in its backward at step 3
 * while rank 0 waits in the all_reduce) and two changes that do nothing. The search must name
 * DDP_MODE, alone sufficient; each trial is a notebook cell that ran under torchrun (two ranks, the
 * hang judged on the rank that stalled), and `analyze` of a trial's folder says what its cell says.
 *
 * Needs /usr/bin/python3 with torch (Debian's python3-torch; .ci/run installs it). About a minute:
 * the lane's quick detector stops each stuck trial seconds after its stall.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Cell } from '../../src/notebook/model.js';
import { readNotebook } from '../../src/notebook/store.js';
import { runCli } from '../helpers/cli.js';
import { DDP_TRAINER, ddpLane } from '../helpers/ddp-lane.js';

const work = mkdtempSync(join(tmpdir(), 'nsa-dbg-bisect-torchrun-'));
afterAll(() => {
  if (!process.env.KEEP_WORK) rmSync(work, { recursive: true, force: true });
});

const cwd = join(work, 'project');
const env = { NSA_DBG_HOME: join(work, 'home') };
const nbFile = join(work, 'bisect.json');
const lane = (name: string, description: string, laneEnv = '') =>
  ddpLane({ name, description, nproc: 2, sigintWaitS: 5, env: laneEnv });
mkdirSync(join(cwd, '.nsa-dbg', 'presets'), { recursive: true });
writeFileSync(join(cwd, '.nsa-dbg', 'presets', 'ddp-good.yaml'), lane('ddp-good', 'two gloo ranks'));
writeFileSync(
  join(cwd, '.nsa-dbg', 'presets', 'ddp-bad.yaml'),
  lane(
    'ddp-bad',
    'the last rank stalls',
    'env: { DDP_MODE: stall, OMP_NUM_THREADS: "1", DDP_NOTE: bisect-me }\n',
  ),
);
const args = ['bisect', '--good', 'ddp-good', '--bad', 'ddp-bad', '--json', '--notebook', nbFile];
const command = ['--', '/usr/bin/python3', '-u', DDP_TRAINER];

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON, read field by field
type Json = Record<string, any>;
const lastJson = (stdout: string): Json => JSON.parse(stdout.trim().split('\n').pop() || '{}');
const HANG_AT = 'step 3 in-step (`backward`)';

/** whether a process still exists (a trial's torchrun or a rank left behind) */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('nsa-dbg bisect of a torchrun lane (real torchrun, 2 gloo ranks)', () => {
  let out: Json;

  it('names DDP_MODE among three env changes, alone sufficient, in few trials', {
    timeout: 200_000,
  }, async () => {
    const t0 = Date.now();
    const r = await runCli([...args, ...command], { cwd, env, timeoutMs: 190_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
    out = lastJson(r.stdout);
    console.log(`bisection of a torchrun lane: ${out.trials.length} trials in ${(Date.now() - t0) / 1000} s`);
    expect(out.changes.map((c: Json) => c.name)).toEqual(['DDP_MODE', 'DDP_NOTE', 'OMP_NUM_THREADS']);
    expect(out.minimal).toEqual([{ name: 'DDP_MODE', good: null, bad: 'stall' }]);
    expect(out).toMatchObject({ proven: true, status: 'found', verdictClass: 'hang' });
    expect(out.conclusion).toBe(`DDP_MODE=stall → hang at ${HANG_AT}; alone sufficient`);
    expect(out.trials.length).toBeLessThanOrEqual(5);
    expect(out.runs).toBe(out.trials.length);
    // every trial with the stall hung where it stalls; every one without it passed its 6 steps
    for (const t of out.trials) {
      if (t.subset.includes('DDP_MODE'))
        expect(t).toMatchObject({ verdict: 'hang', stepsReached: 2, location: HANG_AT });
      else expect(t).toMatchObject({ verdict: 'pass', stepsReached: 6 });
    }
    expect(out.trials.some((t: Json) => t.verdict === 'pass')).toBe(true);
  });

  it("each trial's cell ran under torchrun with two ranks, judged on the rank that stalled", () => {
    const nb = readNotebook(nbFile);
    expect(nb.bisections).toHaveLength(1);
    expect(nb.cells).toHaveLength(out.trials.length);
    for (const t of out.trials) {
      const cell = nb.cells.find((c) => c.id === t.cells[0])!;
      expect(cell.bisect?.id).toBe('b1');
      expect(cell.state).toBe('done');
      // the launch: torchrun with two processes per node, the trainer after it
      const i = cell.command.indexOf('torch.distributed.run');
      expect(i, cell.command.join(' ')).toBeGreaterThan(0);
      expect(cell.command.slice(i + 1, i + 3)).toEqual(['--nproc_per_node', '2']);
      expect(cell.command.at(-1)).toBe(DDP_TRAINER);
      const spec = JSON.parse(readFileSync(join(dirOf(cell), 'command.json'), 'utf8'));
      expect(spec.torchrun).toMatchObject({ nprocPerNode: 2 });
      expect(cell.analysis?.ranks).toEqual([0, 1]);
      expect(cell.verdict).toBe(t.verdict);
      if (t.verdict === 'hang') {
        expect(cell.env.DDP_MODE).toBe('stall');
        expect(cell.go).toBe(false);
        // rank 1 stalled in its own backward; rank 0 only waits for it in the all_reduce
        expect(cell.summary?.stall).toMatchObject({ rank: 1, step: 3, where: 'in-step' });
        expect(cell.analysis?.stall).toMatchObject({ rootCause: { rank: 1, waiting: [0] } });
        expect(cell.excerpts?.dumpTop[0]).toMatch(/ddp_ranks\.py:\d+ in backward(: |$)/);
      } else {
        expect(cell.env.DDP_MODE).toBeUndefined();
        expect(cell.go).toBe(true);
        expect(cell.summary?.stepsReached).toBe(6);
      }
      // nothing of the trial is left running: torchrun, nor either rank
      const pids = [Number(readFileSync(join(dirOf(cell), 'pid'), 'utf8')), ...rankPids(cell)];
      expect(pids.filter(alive), cell.id).toEqual([]);
    }
  });

  it("analyze of a trial's folder agrees with its cell", async () => {
    const nb = readNotebook(nbFile);
    for (const verdict of ['hang', 'pass']) {
      const cell = nb.cells.find((c) => c.verdict === verdict)!;
      const an = await runCli(['analyze', dirOf(cell), '--json'], { cwd, env });
      const offline = JSON.parse(an.stdout) as Json;
      const kept = cell.analysis as Json;
      for (const k of ['verdict', 'stepsReached', 'ranks', 'stall', 'crash', 'summary', 'dumps', 'stackDiff'])
        expect(offline[k], `${cell.id} ${k}`).toEqual(kept[k]);
    }
  });

  it('a second bisection of the same lanes runs nothing: every trial is answered by its cell', async () => {
    const r = await runCli([...args, ...command], { cwd, env, timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    const again = lastJson(r.stdout);
    expect(again).toMatchObject({ bisection: 'b2', runs: 0, minimal: out.minimal });
    expect(again.trials.every((t: Json) => t.cached.every(Boolean))).toBe(true);
  });
});

/** a cell's folder on this machine (evidenceDir is relative to the notebook's folder) */
function dirOf(cell: Cell): string {
  return resolve(dirname(nbFile), cell.evidenceDir);
}

/** the ranks' pids, from their heartbeat records */
function rankPids(cell: Cell): number[] {
  return [0, 1].map((rank) => {
    const first = readFileSync(join(dirOf(cell), `heartbeat_rank${rank}.jsonl`), 'utf8').split('\n')[0]!;
    return Number(JSON.parse(first).pid);
  });
}
