/**
 * The verdict's reading of nsa-dbg's teardown snapshot and of the kernel's OOM kills, on a real run
 * folder (test/fixtures/last-words/torchrun-oom: a 3-rank gloo torchrun whose rank 2 the kernel's
 * OOM killer ended in a memory cgroup, captured by `nsa-dbg run`; see the fixtures' README), and
 * the same folder without its kernel-log record.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lastWordsSummary } from '../../../src/analysis/last-words.js';
import { rssText, teardownSummary } from '../../../src/analysis/teardown.js';
import { parseProbeLine, probeLine } from '../../../src/ingest/probes.js';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'last-words', 'torchrun-oom');
const tmp = mkdtempSync(join(tmpdir(), 'nsa-dbg-teardown-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('teardown snapshot and OOM kill in the verdict (real run folder)', () => {
  it('says what the others were doing when rank 2 exited, and that the kernel OOM-killed rank 2', async () => {
    const r = await analyzeDir(FIX);
    expect(r.verdict).toBe('crash');
    expect(r.teardown).toMatchObject({ trigger: 'rank 2 exited' });
    expect(r.teardown!.ranks.map((t) => [t.rank, t.state])).toEqual([
      [0, 'S'],
      [1, 'S'],
      [2, 'Z'],
    ]);
    expect(r.oomKills).toEqual([
      expect.objectContaining({ rank: 2, pid: 3062, process: 'python3', memcg: true, anonRssKiB: 215476 }),
    ]);
    expect(r.summary).toBe(
      'crash at step 3, rank 2: ChildFailedError: exitcode -9; ' +
        'when rank 2 exited, ranks 0 and 1 were in state S (sleeping, wchan futex_do_wait, 7% CPU); ' +
        'rank 2 was killed by SIGKILL; the kernel log says OOM killer (a cgroup memory limit), 210 MiB RSS; ' +
        'ranks 0 and 1 were waiting in all_reduce when torchrun stopped them (SIGTERM)',
    );
  });

  it('without a readable kernel log (no oom-kill record): killed by SIGKILL (no last words), as before', async () => {
    const dir = join(tmp, 'no-kernel-log');
    cpSync(FIX, dir, { recursive: true });
    const probes = join(dir, 'nsa-dbg-probes.jsonl');
    const kept = readFileSync(probes, 'utf8')
      .split('\n')
      .filter((l) => !l.includes('"oom-kill"'));
    writeFileSync(probes, kept.join('\n'));
    const r = await analyzeDir(dir);
    expect(r.oomKills).toBeUndefined();
    expect(r.summary).toContain('; rank 2 was killed by SIGKILL (no last words); ranks 0 and 1 were waiting');
    expect(r.summary).not.toMatch(/OOM/);
  });
});

describe('the sentences', () => {
  const snap = (ranks: Array<[number, string | null, number | null, string?]>) => ({
    at: 1,
    trigger: 'torchrun began stopping the workers (SIGTERM)',
    ranks: ranks.map(([rank, state, cpuPct, wchan]) => ({
      rank,
      pid: 100 + rank,
      state: state as 'S',
      cpuPct,
      ...(wchan ? { wchan } : {}),
    })),
  });

  it('groups ranks by state, wchan and busy or idle; leaves out the crashed rank and the gone', () => {
    const t = snap([
      [0, 'S', 0, 'futex_do_wait'],
      [1, 'S', 2, 'futex_do_wait'],
      [2, 'R', 98],
      [3, 'D', 0, 'nfs_wait_bit_killable'],
      [4, null, null],
      [5, 'R', 100],
    ]);
    expect(teardownSummary(t, 5)).toBe(
      'when torchrun began stopping the workers (SIGTERM), ranks 0 and 1 were in state S (sleeping, wchan futex_do_wait, 0–2% CPU), ' +
        'rank 2 was in state R (running, 98% CPU), rank 3 was in state D (uninterruptible, wchan nfs_wait_bit_killable, 0% CPU)',
    );
  });

  it('nothing when no rank was alive any more (one signal to the whole group)', () => {
    expect(
      teardownSummary(
        snap([
          [0, null, null],
          [1, 'Z', null],
        ]),
      ),
    ).toBe('');
    expect(teardownSummary(null)).toBe('');
  });

  it('a system-wide OOM kill of 31 GiB, under any launcher (no exit -9 seen)', () => {
    const oom = new Map([
      [
        3,
        {
          kind: 'oom-kill' as const,
          ts: 1,
          rank: 3,
          pid: 9,
          process: 'python',
          memcg: false,
          anonRssKiB: 32505856,
        },
      ],
    ]);
    expect(lastWordsSummary([], false, undefined, [], oom)).toBe(
      'rank 3 was killed by SIGKILL; the kernel log says OOM killer, 31 GiB RSS',
    );
    expect(lastWordsSummary([], true, undefined, [2, 3], oom)).toBe(
      'rank 3 was killed by SIGKILL; the kernel log says OOM killer, 31 GiB RSS; rank 2 was killed by SIGKILL (no last words)',
    );
    expect(rssText(1536 * 1024)).toBe('1.5 GiB RSS');
  });

  it("Slurm's cancel line names who sent SIGTERM (above torchrun, which passed it on)", async () => {
    const { slurmCancelOf } = await import('../../../src/ingest/slurm-cancel.js');
    const w = {
      rank: 0,
      pid: 1,
      signal: 'SIGTERM',
      at: 1,
      mainThreadTop: { function: 'all_reduce', file: 'torch/distributed/distributed_c10d.py', line: 1 },
      waiting: true,
      fatal: false,
      file: 'x.log',
    };
    const stopper = slurmCancelOf(
      '0: slurmstepd-vm: error: *** STEP 1.0 ON vm CANCELLED AT 2026-11-26T18:12:15 ***',
    );
    expect(lastWordsSummary([w], true, undefined, [], new Map(), stopper)).toBe(
      'rank 0 was waiting in all_reduce when Slurm cancelled the job (SIGTERM)',
    );
    expect(lastWordsSummary([w], true)).toBe(
      'rank 0 was waiting in all_reduce when torchrun stopped it (SIGTERM)',
    );
    expect(
      slurmCancelOf(
        'slurmstepd: error: *** JOB 9 ON n1 CANCELLED AT 2026-11-26T18:00:00 DUE TO TIME LIMIT ***',
      ),
    ).toBe('the job hit its time limit');
  });

  it('teardown and oom-kill records round-trip through the probe file; a malformed one is skipped', () => {
    const t = {
      kind: 'teardown' as const,
      ts: 5,
      trigger: 'rank 2 exited',
      ranks: [{ rank: 0, pid: 7, state: 'S' as const, wchan: 'futex_do_wait', cpuPct: 0 }],
      gpuProcesses: [{ pid: 7, name: 'python3', usedMiB: 1200 }],
    };
    expect(parseProbeLine(probeLine(t))).toEqual(t);
    const k = {
      kind: 'oom-kill' as const,
      ts: 5,
      rank: 2,
      pid: 9,
      process: 'python3',
      memcg: true,
      anonRssKiB: 10,
    };
    expect(parseProbeLine(probeLine(k))).toEqual(k);
    expect(parseProbeLine('{"kind":"teardown","ts":5,"trigger":"x"}')).toBeNull();
    expect(parseProbeLine('{"kind":"oom-kill","ts":5,"rank":"2","pid":9}')).toBeNull();
  });
});
