/**
 * The kernel's OOM-killer lines (src/ingest/kernel-oom.ts) on a real dmesg capture (a real kill in
 * a memory cgroup) and on the system-wide and pre-5.x forms written from the kernel's format strings
 * (test/fixtures/kernel-oom/README.md); and the output lines that are a sign of teardown.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseOomKills } from '../../../src/ingest/kernel-oom.js';
import { teardownSign } from '../../../src/session/teardown-signs.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures');
const text = (f: string) => readFileSync(join(FIX, 'kernel-oom', f), 'utf8');

describe('OOM kills in the kernel log', () => {
  it('a real memory-cgroup kill in dmesg: pid, name, anon-rss and total-vm, the cgroup flag, the time since boot', () => {
    const kills = parseOomKills(text('dmesg-memcg.txt'));
    // the task table and the call trace name pids and processes too: only the victim counts
    expect([...kills.keys()]).toEqual([3346]);
    expect(kills.get(3346)).toEqual({
      pid: 3346,
      process: 'python3',
      anonRssKiB: 65280,
      totalVmKiB: 76660,
      memcg: true,
      bootS: 27352.321405,
    });
  });

  it('the system-wide form (dmesg) and the pre-5.x pair (journalctl -o short-unix); the reaper line adds nothing', () => {
    const kills = parseOomKills(text('global.txt'));
    expect([...kills.keys()].sort()).toEqual([48213, 9001].sort());
    expect(kills.get(48213)).toMatchObject({
      process: 'python',
      anonRssKiB: 32505856,
      totalVmKiB: 52428800,
      memcg: false,
    });
    expect(kills.get(48213)!.bootS).toBeCloseTo(1234567.890201, 6);
    expect(kills.get(9001)).toMatchObject({ process: 'pt_main_thread', anonRssKiB: 30123456, memcg: false });
    expect(kills.get(9001)!.epochS).toBeCloseTo(1764177600.123901, 6);
  });

  it('an oom-kill: line alone names the task and pid', () => {
    const line =
      '[27352.321389] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/a,task_memcg=/a,task=python3,pid=3346,uid=0';
    expect(parseOomKills(line).get(3346)).toEqual({
      pid: 3346,
      process: 'python3',
      memcg: true,
      bootS: 27352.321389,
    });
    expect(parseOomKills('random line\n[1.0] oom-kill:task=x,pid=abc').size).toBe(0);
  });
});

describe('signs of teardown in the output', () => {
  it.each([
    ['[default2]:Traceback (most recent call last):', 'local rank 2 crashed'],
    ['[rank1]: Traceback (most recent call last):', 'rank 1 crashed'],
    ['[default0]:[rank0]: Traceback (most recent call last):', 'rank 0 crashed'],
    ['Traceback (most recent call last):', 'a traceback was printed'],
    // under srun --label (the Slurm kind): the agent's task, then torchrun's tee prefix
    ['1: [default1]:Traceback (most recent call last):', 'local rank 1 crashed'],
    [
      'WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 16096 closing signal SIGTERM',
      'torchrun began stopping the workers (SIGTERM)',
    ],
    [
      'W1123 21:14:26.824000 1911 torch/distributed/elastic/multiprocessing/api.py:1012] Sending process 1969 closing signal SIGINT',
      'torchrun began stopping the workers (SIGINT)',
    ],
    [
      'WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down workers',
      'torchrun got signal 15',
    ],
    [
      'ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 2 (pid: 16098) of binary: /usr/bin/python3',
      'local rank 2 exited (-9)',
    ],
    [
      'slurmstepd: error: *** STEP 12.0 ON node1 CANCELLED AT 2026-11-26T18:00:00 ***',
      'Slurm cancelled the job',
    ],
    [
      'slurmstepd: error: *** JOB 12 ON node1 CANCELLED AT 2026-11-26T18:00:00 DUE TO TIME LIMIT ***',
      'the job hit its time limit',
    ],
    [
      'srun: Job step aborted: Waiting up to 32 seconds for job step to finish.',
      'srun began ending the job step',
    ],
  ])('%s', (line, sign) => {
    expect(teardownSign(line)).toBe(sign);
  });

  it('a run across nodes: the task prefix and the node records turn a local rank into the global one', () => {
    // task 1's agent runs ranks 2 and 3 (its local 0 and 1); task 0 is not placed yet
    const rankOf = (task: number, local: number) => (task === 1 ? 2 + local : null);
    expect(teardownSign('1: [default1]:Traceback (most recent call last):', rankOf)).toBe('rank 3 crashed');
    expect(teardownSign('0: [default1]:Traceback (most recent call last):', rankOf)).toBe(
      'local rank 1 crashed',
    );
    const failed =
      '1: ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 1) of binary: python3';
    expect(teardownSign(failed, rankOf)).toBe('rank 2 exited (-9)');
    // no task prefix: a local rank stays one
    expect(teardownSign('[default1]:Traceback (most recent call last):', rankOf)).toBe(
      'local rank 1 crashed',
    );
  });

  // the same rule on whole real captures: torch 2.11 over NCCL on 2 × H200 (a rank's crash, and
  // torchrun stopped by SIGINT), torch 1.13 over gloo on CPU (an OOM-killed rank)
  it.each([
    [
      'h200x2-nccl/4-fr',
      ['torchrun got signal 2', 'torchrun began stopping the workers (SIGINT)', 'rank 1 crashed'],
    ],
    [
      'torch211/vibe-nccl-unused',
      [
        'rank 1 crashed',
        'rank 0 crashed',
        'torchrun began stopping the workers (SIGTERM)',
        'local rank 0 exited (1)',
      ],
    ],
    [
      'last-words/torchrun-oom',
      ['torchrun began stopping the workers (SIGTERM)', 'local rank 2 exited (-9)'],
    ],
  ])('real output, %s: its signs of teardown', (dir, want) => {
    const signs = readFileSync(join(FIX, dir, 'stdout.log'), 'utf8')
      .split('\n')
      .map((l) => teardownSign(l))
      .filter((x) => x !== null);
    for (const w of want) expect(signs).toContain(w);
  });

  it('ordinary lines are no sign', () => {
    for (const l of [
      'step 0003 | loss 0.3333 | lr 1.00e-02 | toks/s 100',
      'INFO:torch.distributed.elastic.agent.server.api:[default] Starting worker group',
      'a traceback (most recent call last) in prose',
    ])
      expect(teardownSign(l)).toBeNull();
  });
});
