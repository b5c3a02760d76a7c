/**
 * Last words for real: the stack hook in real processes under a real torchrun (Debian's torch 1.13,
 * gloo on CPU) and `nsa-dbg run --headless --json`, the trainer test/fixtures/trainers/last_words.py.
 * Whoever ends the run (torchrun after a rank's crash, `timeout -s TERM` around the launcher, the
 * trainer's own SIGTERM handler), each rank's stack at that moment is in the evidence, live and
 * offline (`nsa-dbg analyze`), and the process ends as it would have.
 *
 * torchrun's ports are free ones (--master_port), never 29500, so runs beside this one cannot collide.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import {
  aliveInSnapshot,
  expectSeenByLivenessCheck,
  LAST_WORDS_LANE,
  LAST_WORDS_TRAINER,
  shellRanksSigkill,
} from '../helpers/last-words.js';
import { makeMemcg } from '../helpers/memcg.js';
import { freePort } from '../helpers/ports.js';
import { ranksSaid } from '../helpers/ranks-said.js';

const TRAINER = LAST_WORDS_TRAINER;
const LANE = LAST_WORDS_LANE;
const work = mkdtempSync(join(tmpdir(), 'nsa-dbg-last-words-'));
/** a 96 MiB memory cgroup for the OOM test (root, a writable cgroup tree, a readable dmesg) */
const memcg = makeMemcg(`nsa-dbg-oom-${process.pid}`, 96 << 20);
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
  memcg?.remove();
});

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON, read field by field
type Any = any;

async function headless(
  name: string,
  cmd: string[],
  extraEnv: Record<string, string> = {},
): Promise<{ code: number | null; live: Any; offline: Any }> {
  const cwd = join(work, name);
  mkdirSync(join(cwd, '.nsa-dbg', 'presets'), { recursive: true });
  writeFileSync(join(cwd, '.nsa-dbg', 'presets', 'lw.yaml'), LANE);
  const env = { NSA_DBG_HOME: join(cwd, 'home'), ...extraEnv };
  const args = ['run', '--headless', '--json', '--lane', 'lw', '--runs-dir', join(cwd, 'runs'), '--', ...cmd];
  const run = await runCli(args, { cwd, env, timeoutMs: 170_000 });
  expect(run.stderr).not.toMatch(/at .*\.js:\d+/);
  const live = JSON.parse(run.stdout.trim().split('\n').pop()!);
  const an = await runCli(['analyze', live.runDir, '--json'], { cwd, env });
  return { code: run.code, live, offline: JSON.parse(an.stdout) };
}

const torchrun = async () => [
  '/usr/bin/python3',
  '-m',
  'torch.distributed.run',
  '--nproc_per_node',
  '3',
  '--master_port',
  String(await freePort()),
  '--redirects',
  '2',
  '--tee',
  '2',
];

/** rank → [signal, waiting, main thread's top function] of its last record */
const byRank = (r: Any) =>
  Object.fromEntries(
    (r.lastWords as Any[]).map((w) => [w.rank, [w.signal, w.waiting, w.mainThreadTop?.function]]),
  );

/**
 * the ranks other than the crashed one that nsa-dbg's teardown snapshot found alive and idle: asleep
 * in the kernel (S, with a wchan), or runnable with no CPU (R): a loaded box catches a waiting rank
 * between gloo's timed wake-up and its next core (seen here and on CI: "R", 0 % CPU, while the CI
 * ran beside it). The CPU % needs a second reading, which a loaded box can take after torchrun has
 * stopped the rank (unmeasured, then: the summary leaves it out)
 */
const idlePeers = (r: Any, crashed: number) =>
  (r.teardown.ranks as Any[])
    .filter(
      (t) =>
        t.rank !== crashed &&
        ((t.state === 'S' && t.wchan) || t.state === 'R') &&
        (t.cpuPct === null || t.cpuPct < 20),
    )
    .map((t) => t.rank);

/**
 * the ranks the teardown snapshot found alive (not gone, not a zombie). A rank SIGKILLed closes its
 * connections, and the kernel wakes its peers waiting on them: the snapshot taken as its death is
 * seen can read a peer as running (R) for that instant (CI read `R, 3 %, futex_do_wait`)
 */
const alive = aliveInSnapshot;

describe('last words: the evidence survives whoever kills the run', () => {
  // rank 2's exit takes 8 s after its traceback (an atexit handler): its peers are confirmed hung
  // (floorS 3 + spinConfirmS 4) seconds before torchrun can see it gone and stop them. nsa-dbg must
  // leave that teardown to torchrun (launcher-teardown.ts): a stop of its own would make the last
  // words SIGINT
  it('rank 2 raises under torchrun and takes 8 s to exit: ranks 0 and 1 were waiting in all_reduce when torchrun stopped them', async () => {
    const { live, offline } = await headless('crash', [...(await torchrun()), TRAINER, 'crash']);
    for (const r of [live, offline]) {
      expect(r.verdict).toBe('crash');
      expect(r.crash.rank).toBe(2);
      expect(r.crash.exception).toBe('ValueError');
      expect(byRank(r)).toEqual({ 0: ['SIGTERM', true, 'all_reduce'], 1: ['SIGTERM', true, 'all_reduce'] });
      for (const w of r.lastWords) {
        expect(w.pid).toBeGreaterThan(0);
        expect(w.at).toBeGreaterThan(1.7e9);
        expect(w.mainThreadTop.file).toMatch(/torch\/distributed\/distributed_c10d\.py$/);
      }
      expect(r.summary).toMatch(
        /^crash .*rank 2: ValueError: bad batch.*; ranks 0 and 1 were waiting in all_reduce when torchrun stopped them \(SIGTERM\)$/,
      );
      // nsa-dbg's own snapshot at the traceback, before torchrun's monitor saw rank 2 exit: the
      // others alive and idle (gloo's wait wakes now and then: a few % of a core on a loaded box,
      // written as a range when the two differ), in the state the snapshot read
      expect(r.teardown.trigger).toBe('local rank 2 crashed');
      expect(idlePeers(r, 2), JSON.stringify(r.teardown)).toEqual([0, 1]);
      const state = String.raw`in state [SR] \((?:sleeping|running)(?:, wchan \w+)?(?:, \d+(?:–\d+)?% CPU)?\)`;
      expect(r.summary).toMatch(
        new RegExp(
          `; when local rank 2 crashed, (?:ranks 0 and 1 were ${state}|rank 0 was ${state}, rank 1 was ${state}); ranks 0 and 1 were waiting`,
        ),
      );
    }
  }, 200_000);

  it('rank 2 dies of SIGKILL under torchrun: named as killed with no last words; the others waiting in all_reduce', async () => {
    const { live, offline } = await headless('sigkill', [...(await torchrun()), TRAINER, 'sigkill']);
    for (const r of [live, offline]) {
      expect(byRank(r)).toEqual({ 0: ['SIGTERM', true, 'all_reduce'], 1: ['SIGTERM', true, 'all_reduce'] });
      expect(r.summary).toContain(
        '; rank 2 was killed by SIGKILL (no last words); ranks 0 and 1 were waiting in all_reduce when torchrun stopped them (SIGTERM)',
      );
      // no line tells of rank 2's death: nsa-dbg sees its process gone (a zombie torchrun has not
      // reaped yet) while the others live, checked every 250 ms. On a loaded box that check can
      // come after torchrun's own line (seen on CI: "torchrun began stopping the workers
      // (SIGTERM)"), printed just before it signals: a sign too, and then the peers may already be
      // on their way out
      expect(['rank 2 exited', 'torchrun began stopping the workers (SIGTERM)']).toContain(
        r.teardown.trigger,
      );
      if (r.teardown.trigger === 'rank 2 exited')
        expect(alive(r), JSON.stringify(r.teardown)).toEqual([0, 1]);
      else expect(alive(r).every((k: number) => k === 0 || k === 1)).toBe(true);
    }
  }, 200_000);

  it.skipIf(memcg === null)(
    "rank 2 killed by the kernel's OOM killer (a memory cgroup's limit): named from the kernel log",
    async () => {
      const { live, offline } = await headless('oom', [...(await torchrun()), TRAINER, 'oom'], {
        NSA_DBG_TEST_OOM_CGROUP: memcg!.dir,
      });
      for (const r of [live, offline]) {
        expect(byRank(r)).toEqual({ 0: ['SIGTERM', true, 'all_reduce'], 1: ['SIGTERM', true, 'all_reduce'] });
        expect(r.oomKills).toHaveLength(1);
        expect(r.oomKills[0]).toMatchObject({ rank: 2, process: 'python3', memcg: true });
        // killed past the limit: its resident memory is about the limit (this cgroup's charge only)
        expect(r.oomKills[0].anonRssKiB).toBeGreaterThan(32 * 1024);
        expect(r.summary).toMatch(
          /; rank 2 was killed by SIGKILL; the kernel log says OOM killer \(a cgroup memory limit\), \d+ MiB RSS; ranks 0 and 1 were waiting in all_reduce when torchrun stopped them \(SIGTERM\)/,
        );
      }
    },
    200_000,
  );

  it("gloo's collective timeout: rank 1, elsewhere (save_checkpoint), is said to be there when torchrun stopped it", async () => {
    const { live, offline } = await headless('gloo-timeout', [...(await torchrun()), TRAINER, 'timeout']);
    for (const r of [live, offline]) {
      // gloo raises on its timeout in the ranks that came (torch 1.13 and 2.11: no abort, so no
      // fatal-signal record): a hang, whose culprit is the one rank that did not time out
      expect(r.verdict).toBe('hang');
      expect(r.stall).toMatchObject({ rank: 1, rootCause: { rank: 1, waiting: [0, 2] } });
      expect(r.lastWords.map((w: Any) => w.rank)).toEqual([1]);
      expect(r.lastWords[0]).toMatchObject({ signal: 'SIGTERM', waiting: false });
      expect(r.lastWords[0].mainThreadTop).toMatchObject({ function: 'save_checkpoint' });
      expect(r.summary).toMatch(
        /; rank 1 was in save_checkpoint \(last_words\.py:\d+\) when torchrun stopped it \(SIGTERM\)$/,
      );
    }
  }, 200_000);

  it('`timeout -s TERM` around the launcher: every rank’s stack at the moment of the kill', async () => {
    const { live, offline } = await headless('timeout', [
      'timeout',
      '-s',
      'TERM',
      '25',
      ...(await torchrun()),
      TRAINER,
      'steps',
    ]);
    for (const r of [live, offline]) {
      expect(r.exitCode).toBe(124);
      // killed from outside while it trained: torchrun's SignalException is no failure of its own
      expect(r.verdict).toBe('incomplete');
      expect(r.killed).toBe(true);
      expect(r.summary).not.toMatch(/launcher failed/);
      expect(r.lastWords.map((w: Any) => w.rank)).toEqual([0, 1, 2]);
      const ats = r.lastWords.map((w: Any) => w.at);
      for (const w of r.lastWords) {
        expect(w.signal).toBe('SIGTERM');
        // in the trainer's step (its sleep) or in its all_reduce: never in the hook itself
        expect(w.mainThreadTop.file).toMatch(/last_words\.py$|torch\/distributed\//);
        expect(w.mainThreadTop.file).not.toMatch(/sitecustomize\.py$/);
      }
      // one signal to the whole process group: the same moment on every rank
      expect(Math.max(...ats) - Math.min(...ats)).toBeLessThan(2);
      // the summary says where each of the three ranks was
      expect(ranksSaid(r.summary, 'when SIGTERM came')).toEqual([0, 1, 2]);
    }
  }, 200_000);

  it('a trainer with its own SIGTERM handler: it still runs it and exits as it chose; the stack is written first', async () => {
    const { live, offline } = await headless('own', ['/usr/bin/python3', '-u', TRAINER, 'own']);
    expect(live.exitCode).toBe(3);
    expect(readFileSync(join(live.runDir, 'stdout.log'), 'utf8')).toMatch(
      /trainer's own SIGTERM handler ran \(signal 15\)/,
    );
    for (const r of [live, offline]) {
      expect(r.lastWords).toHaveLength(1);
      expect(r.lastWords[0]).toMatchObject({ rank: 0, signal: 'SIGTERM', waiting: false });
      expect(r.lastWords[0].mainThreadTop).toMatchObject({ function: 'own' });
      expect(r.lastWords[0].mainThreadTop.file).toMatch(/last_words\.py$/);
    }
    expect(offline.exitCode).toBe(3);
  }, 120_000);

  // no torchrun: three ranks started by a shell, so no launcher line says that rank 2 died and
  // nobody stops the others (its forked child holds their sockets for 15 s). Only the liveness
  // check on this machine's /proc sees it gone, every time (the torchrun case above may lose that
  // race to torchrun's own line)
  it('three ranks from a shell, rank 2 SIGKILLed: only the liveness check can tell, and it does', async () => {
    const { live, offline } = await headless('shell', await shellRanksSigkill());
    for (const r of [live, offline]) expectSeenByLivenessCheck(r);
  }, 200_000);
});

describe('the exit status is the one without the hook', () => {
  it('own handler: the same status with and without nsa-dbg (3), and its line printed', async () => {
    const { spawnSync } = await import('node:child_process');
    const plain = spawnSync('/usr/bin/python3', ['-u', TRAINER, 'own'], { cwd: work, encoding: 'utf8' });
    expect(plain.status).toBe(3);
    expect(plain.stdout).toMatch(/trainer's own SIGTERM handler ran \(signal 15\)/);
  });
});
