/**
 * `nsa-dbg run --hosts a,b` against two real sshd's on 127.0.0.1 (two aliases, two ports): two
 * hosts, one torchrun agent each, 2 ranks per agent, meeting at a c10d rendezvous on the first host.
 * The gloo DDP trainer of the many-ranks tests (test/fixtures/trainers/ddp_ranks.py): a run that
 * passes, a rank on the second host that stalls, a rank that crashes first. Each host's run dir is
 * its own (a sibling per host under the same runs root), mirrored byte for byte under the cell's
 * hosts/<alias>/, and `analyze` of the cell's folder gives the live verdict.
 *
 * Needs sshd (openssh-server) and /usr/bin/python3 with torch (.ci/run installs them).
 */

import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNodeLine } from '../../src/ingest/node-map.js';
import { BIN, runCli } from '../helpers/cli.js';
import { DDP_TRAINER, ddpLane } from '../helpers/ddp-lane.js';
import { freePort } from '../helpers/ports.js';
import { startTwoHosts, type TwoHosts } from '../helpers/two-hosts.js';
import { waitUntil } from '../helpers/wait.js';

const work = mkdtempSync(join(tmpdir(), 'nsa-dbg-hosts-'));
let hosts: TwoHosts;

beforeAll(async () => {
  hosts = await startTwoHosts(work);
}, 60_000);

afterAll(async () => {
  await hosts?.stop();
  if (!process.env.KEEP_WORK) rmSync(work, { recursive: true, force: true });
});

const LANE = ddpLane({
  name: 't-ddp2',
  description: '2 ranks per node under torchrun',
  nproc: 2,
  sigintWaitS: 8,
});

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON, read field by field
type Json = Record<string, any>;

/** a folder of its own for one case: the lane, nsa-dbg's home, the hosts' runs root */
function folder(name: string) {
  const cwd = join(work, name);
  mkdirSync(join(cwd, '.nsa-dbg', 'presets'), { recursive: true });
  writeFileSync(join(cwd, '.nsa-dbg', 'presets', 't-ddp2.yaml'), LANE);
  return { cwd, env: { NSA_DBG_HOME: join(cwd, 'home') } };
}

/** `run --hosts node-a,node-b` of the trainer in `mode`, without the first words */
async function hostsArgs(cwd: string): Promise<string[]> {
  const args = ['--lane', 't-ddp2', '--ssh-config', hosts.sshConfig];
  args.push('--hosts', 'node-a,node-b', '--runs-dir', join(cwd, 'remote'));
  args.push('--cwd', cwd, '--rdzv-port', String(await freePort()));
  return args;
}

/** `run --hosts node-a,node-b --headless --json`, then `analyze` of the cell's folder */
async function headless(mode: string): Promise<{ code: number | null; live: Json; offline: Json }> {
  const { cwd, env } = folder(mode);
  const args = ['run', '--headless', '--json', ...(await hostsArgs(cwd))];
  const run = await runCli([...args, '--', 'python3', '-u', DDP_TRAINER, mode], {
    cwd,
    env,
    timeoutMs: 170_000,
  });
  expect(run.stderr).not.toMatch(/at .*\.js:\d+/);
  const live = JSON.parse(run.stdout.trim().split('\n').pop() || '{}') as Json;
  expect(live.localDir, run.stderr).toBeTruthy();
  const an = await runCli(['analyze', live.localDir, '--json'], { cwd, env });
  return { code: run.code, live: { ...live, cwd }, offline: JSON.parse(an.stdout) };
}

/** each host's run dir (a sibling per host under --runs-dir) and its mirror under the cell */
function hostDirs(live: Json): Array<{ alias: string; remote: string; mirror: string }> {
  const cell = live.localDir as string;
  const runId = cell.split('/').pop()!;
  return ['node-a', 'node-b'].map((alias) => ({
    alias,
    remote: join(live.cwd as string, 'remote', `${runId}-${alias}`),
    mirror: join(cell, 'hosts', alias),
  }));
}

/**
 * Where a rank ran, from the workers' own records: c10d numbers the agents in the order they joined,
 * so rank 3 is on either host (both orders happen).
 */
function nodeOfRank(live: Json, rank: number): string {
  const recs = readFileSync(join(live.localDir, 'nodes.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map(parseNodeLine);
  const w = recs.find((r) => r !== null && 'rank' in r && r.rank === rank);
  if (!w) throw new Error(`no node record of rank ${rank}`);
  return w.node;
}

describe('--hosts: 2 hosts × 2 ranks over two real sshd’s', () => {
  it('passes: an agent per host at one rendezvous, ranks placed on their hosts, mirrors byte-exact, analyze agrees', async () => {
    const { code, live, offline } = await headless('ok');
    expect(
      code,
      JSON.stringify({ verdict: live.verdict, reasons: live.reasons, summary: live.summary }),
    ).toBe(0);
    expect(live.verdict).toBe('pass');
    expect(live.ranks).toEqual([0, 1, 2, 3]);
    const cell = live.localDir as string;
    const recs = readFileSync(join(cell, 'nodes.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(parseNodeLine);
    const workers = recs.filter((r): r is Extract<typeof r, { rank: number }> => r !== null && 'rank' in r);
    expect(workers.map((w) => w.rank).sort()).toEqual([0, 1, 2, 3]);
    for (const alias of ['node-a', 'node-b'])
      expect(
        workers
          .filter((w) => w.node === alias)
          .map((w) => w.localRank)
          .sort(),
      ).toEqual([0, 1]);
    // the merged stdout labels each line with its host (its place in --hosts), as srun --label does
    // with its tasks; rank 0 prints the steps, on whichever host joined the rendezvous first
    const out = readFileSync(join(cell, 'stdout.log'), 'utf8');
    const rank0Host = ['node-a', 'node-b'].indexOf(nodeOfRank(live, 0));
    expect(out).toMatch(new RegExp(`^${rank0Host}: step 0001 \\| loss`, 'm'));
    expect(out).toMatch(new RegExp(`^${1 - rank0Host}: `, 'm'));
    const cmd = JSON.parse(readFileSync(join(cell, 'command.json'), 'utf8'));
    for (const h of hostDirs(live)) {
      // folders (torchrun's logs, nsa-dbg's stack hook) are not evidence: the mirror copies files
      const remoteFiles = readdirSync(h.remote).filter(
        (n) => !n.includes('.tmp') && statSync(join(h.remote, n)).isFile(),
      );
      expect(remoteFiles).toEqual(expect.arrayContaining(['stdout.log', 'exit_code', 'pid', 'node.sh']));
      for (const n of remoteFiles)
        expect(
          readFileSync(join(h.mirror, n)).equals(readFileSync(join(h.remote, n))),
          `${h.alias}/${n}`,
        ).toBe(true);
      // each agent meets the others at the first host, with the run id as the rendezvous id
      expect(readFileSync(join(h.remote, 'node.sh'), 'utf8')).toMatch(
        new RegExp(
          `--nnodes 2 --rdzv_backend c10d --rdzv_endpoint '?127\\.0\\.0\\.1:\\d+'? --rdzv_id '?${cmd.runId}'? `,
        ),
      );
    }
    expect(offline.verdict).toBe('pass');
    expect(offline.stepsReached).toBe(live.stepsReached);
  }, 200_000);

  it('the last rank stalls: the verdict names its host, rank and frame; its dump came over that host’s ssh', async () => {
    const { code, live, offline } = await headless('stall');
    expect(code).toBe(1);
    expect(live.verdict).toBe('hang');
    const node = nodeOfRank(live, 3);
    expect(live.stall).toMatchObject({ rank: 3, node });
    expect(live.stall.rootCause).toMatchObject({ rank: 3 });
    expect(live.stall.frame).toMatchObject({ function: 'backward' });
    // the stalled rank's stack was asked for on its host, over that host's own ssh connection (the
    // stack hook's signal, with every silent rank at once), and filed from that host's mirror
    const r3 = live.dumpRequests.filter(
      (r: Json) => r.rank === 3 && (r.outcome === 'faulthandler' || r.outcome === 'written'),
    );
    expect(r3.length).toBeGreaterThan(0);
    for (const r of r3) expect(r.file).toMatch(new RegExp(`^hosts/${node}/`));
    // its main thread sleeps in Python: stuck, never "in native code" because the signal took a
    // second or two over ssh to leave for the box
    expect(live.stall).toMatchObject({ state: 'stuck' });
    expect(offline.verdict).toBe('hang');
    expect(offline.stall).toEqual(live.stall);
    // nsa-dbg's stop (SIGINT, through each host's torchrun) left every rank's last words in its
    // host's stack log, mirrored: ranks 0 and 1 on node-a, 2 and 3 on node-b
    for (const r of [live, offline]) {
      expect(r.lastWords.map((w: Json) => [w.rank, w.signal])).toEqual(
        [0, 1, 2, 3].map((k) => [k, 'SIGINT']),
      );
      for (const w of r.lastWords) expect(w.file).toMatch(new RegExp(`^hosts/${nodeOfRank(live, w.rank)}/`));
      expect(r.summary).toMatch(/rank 3 was in backward \(ddp_ranks\.py:\d+\) when SIGINT came$/);
    }
  }, 200_000);

  it('a rank that crashes first is named with its host, not torchrun’s first observed failure', async () => {
    const { code, live, offline } = await headless('crash');
    expect(code).toBe(1);
    expect(live.verdict).toBe('crash');
    expect(live.crash).toMatchObject({ rank: 3, exception: 'ValueError', node: nodeOfRank(live, 3) });
    expect(offline.crash).toEqual(live.crash);
    // the crash's traceback set off nsa-dbg's teardown snapshot of every rank on both hosts, its
    // sign named by the global rank (the host's output says `1: [default1]:`, a local rank)
    for (const r of [live, offline]) {
      expect(r.teardown.trigger).toMatch(/^rank [0-3] crashed$/);
      expect(r.teardown.ranks.map((t: Json) => t.rank)).toEqual([0, 1, 2, 3]);
    }
  }, 200_000);

  it('a rank that fails before joining: the other host is stopped after the grace, not left waiting 30 min', async () => {
    const t0 = Date.now();
    const { code, live, offline } = await headless('early');
    expect(code).toBe(1);
    expect(live.verdict).toBe('crash');
    // the host that printed the traceback (its worker may have died before it was recorded: the
    // sibling on its agent places it)
    const printedBy = ['node-a', 'node-b'].filter((h) =>
      readFileSync(join(live.localDir, 'hosts', h, 'stdout.log'), 'utf8').includes('FileNotFoundError'),
    );
    expect(printedBy).toHaveLength(1);
    expect(live.crash).toMatchObject({ rank: 3, exception: 'FileNotFoundError', node: printedBy[0] });
    expect(offline.crash).toEqual(live.crash);
    // node-a's ranks sat in init_process_group (gloo waits 30 min): the grace ended them
    expect(Date.now() - t0).toBeLessThan(90_000);
  }, 200_000);

  it('attach after the TUI was killed: every host reconnected, every mirror resumed, the verdict of a run never detached', async () => {
    const { cwd, env } = folder('attach');
    const ttyEnv = { ...process.env, ...env, TERM: 'xterm-256color' } as Record<string, string>;
    delete ttyEnv.CI;
    const args = ['run', ...(await hostsArgs(cwd)), '--', 'python3', '-u', DDP_TRAINER, 'stall'];
    const tui = pty.spawn(process.execPath, [BIN, ...args], { cwd, env: ttyEnv, cols: 140, rows: 40 });
    const runs = join(env.NSA_DBG_HOME, 'runs');
    let cell = '';
    try {
      // both agents up and mirrored, the run under way: then nsa-dbg is killed, the agents go on
      await waitUntil(
        () => {
          const id = existsSync(runs) ? readdirSync(runs)[0] : undefined;
          cell = id ? join(runs, id) : '';
          const up = ['node-a', 'node-b'].every((h) => existsSync(join(cell, 'hosts', h, 'pid')));
          // rank 0 prints the steps, on whichever host joined the rendezvous first
          return up && /^[01]: step 0002/m.test(readIf(join(cell, 'stdout.log')));
        },
        { timeoutMs: 90_000, what: 'both agents up, step 2 merged' },
      );
    } finally {
      process.kill(tui.pid, 'SIGKILL');
    }
    const list = await runCli(['attach', '--json'], { cwd, env });
    const [listed] = JSON.parse(list.stdout) as Json[];
    expect(listed).toMatchObject({ launcher: 'hosts', status: 'running' });
    const out = await runCli(
      ['attach', listed!.runId, '--headless', '--json', '--ssh-config', hosts.sshConfig],
      {
        cwd,
        env,
        timeoutMs: 150_000,
      },
    );
    expect(out.stderr).not.toMatch(/at .*\.js:\d+/);
    const live = JSON.parse(out.stdout.trim().split('\n').pop() || '{}') as Json;
    // as the never-detached stall above: the hang, its rank on its host, its frame, its dump
    expect(out.code, out.stderr).toBe(1);
    expect(live.verdict).toBe('hang');
    const node = nodeOfRank(live, 3);
    expect(live.stall).toMatchObject({ rank: 3, node, frame: { function: 'backward' } });
    expect(live.stall.rootCause).toMatchObject({ rank: 3 });
    // the attach stopped the run on both hosts, and each mirror ends as its host's run dir
    for (const h of hostDirs({ ...live, cwd })) {
      expect(readFileSync(join(h.remote, 'exit_code'), 'utf8')).toMatch(/^\d+\n$/);
      expect(
        readFileSync(join(h.mirror, 'stdout.log')).equals(readFileSync(join(h.remote, 'stdout.log'))),
      ).toBe(true);
    }
    // every line of each host's output is merged once, in its order
    const merged = readFileSync(join(cell, 'stdout.log'), 'utf8').split('\n');
    for (const [i, h] of hostDirs({ ...live, cwd }).entries()) {
      const own = readFileSync(join(h.remote, 'stdout.log'), 'utf8').split('\n').filter(Boolean);
      expect(merged.filter((l) => l.startsWith(`${i}: `)).map((l) => l.slice(`${i}: `.length))).toEqual(own);
    }
    const an = await runCli(['analyze', cell, '--json'], { cwd, env });
    const offline = JSON.parse(an.stdout) as Json;
    expect(offline.verdict).toBe('hang');
    expect(offline.stall).toEqual(live.stall);
  }, 240_000);
});

function readIf(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
