/**
 * The Flight Recorder over `--host`: a lane that points TORCH_NCCL_DEBUG_INFO_TEMP_FILE at
 * `{runDir}` gets the ranks' dumps into the run dir on the box, and nsa-dbg collects them into its
 * local mirror and reads them, live and through `analyze` of the mirror. CI has no GPU, so the
 * ranks are a replay of a real NCCL timeout on 2 × H200 (test/fixtures/trainers/fr_replay.py: the
 * output torchrun printed and the dumps its ranks wrote, test/fixtures/torch211/fr), run on a box
 * reached through a real OpenSSH sshd on 127.0.0.1.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { sshdForFile } from '../helpers/sshd.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');
const REPLAY = join(FIXTURES, 'trainers', 'fr_replay.py');
const CAPTURE = join(FIXTURES, 'torch211', 'fr');
const LANE = `name: fr
description: NCCL with the Flight Recorder dumping into the run dir
stepsFlag: ""
env:
  TORCH_NCCL_TRACE_BUFFER_SIZE: "2000"
  TORCH_NCCL_DUMP_ON_TIMEOUT: "1"
  TORCH_NCCL_DEBUG_INFO_TEMP_FILE: "{runDir}/nccl_trace_rank_"
acceptance: { finiteLoss: true, noStall: true }
`;

const box = sshdForFile('nsa-dbg-ssh-fr-');
const work = box.work;

describe('the Flight Recorder over --host (real OpenSSH)', () => {
  it('the dumps written on the box are collected into the local mirror and read: rank 1 never entered all_reduce #6', async () => {
    const cwd = join(work, 'fr');
    mkdirSync(join(cwd, '.nsa-dbg', 'presets'), { recursive: true });
    writeFileSync(join(cwd, '.nsa-dbg', 'presets', 'fr.yaml'), LANE);
    const env = { NSA_DBG_HOME: join(cwd, 'home') };
    const remote = ['--host', 'target', '--ssh-config', box.sshd.configPath, '--runs-dir', join(cwd, 'runs')];
    const run = await runCli(
      ['run', '--headless', '--json', '--lane', 'fr', ...remote, '--', 'python3', '-u', REPLAY, CAPTURE],
      { cwd, env, timeoutMs: 120_000 },
    );
    expect(run.stderr).not.toMatch(/at .*\.js:\d+/);
    const live = JSON.parse(run.stdout.trim().split('\n').pop()!);
    // the box's run dir and the local mirror are two folders: the dumps came through the mirror
    expect(live.localDir).not.toBe(live.runDir);
    for (const r of [0, 1]) expect(existsSync(join(live.localDir, `nccl_trace_rank_${r}`))).toBe(true);
    const an = await runCli(['analyze', live.localDir, '--json'], { cwd, env });
    const offline = JSON.parse(an.stdout);
    for (const r of [live, offline]) {
      expect(r.flightRecorder).toEqual([
        expect.objectContaining({
          ranks: [1],
          op: 'nccl:all_reduce',
          seq: 6,
          pg: 'default_pg',
          waiting: [0],
        }),
      ]);
    }
    // the verdict's reasons (headless only) say it in words
    expect(live.reasons).toContain(
      'rank 1 never entered nccl:all_reduce #6 (default_pg): collective timeout',
    );
  }, 150_000);
});
