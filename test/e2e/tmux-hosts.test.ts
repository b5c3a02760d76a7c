/**
 * The dashboard of a `--hosts` run in real tmux: two real sshd's on 127.0.0.1 as two hosts, one
 * torchrun agent each, 2 ranks per agent (test/fixtures/trainers/ddp_ranks.py, the last rank stalls
 * in its backward). The header names the hosts, the rank table groups ranks by host, the culprit
 * is named with its host, and quitting stops both hosts' agents.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DDP_TRAINER, ddpLane } from '../helpers/ddp-lane.js';
import { freePort } from '../helpers/ports.js';
import { TmuxSession } from '../helpers/tmux.js';
import { startTwoHosts, type TwoHosts } from '../helpers/two-hosts.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'nsa-dbg');
let tmux: TmuxSession | null = null;
let hosts: TwoHosts;
const work = mkdtempSync(join(tmpdir(), 'nsa-e2e-hosts-'));

beforeAll(async () => {
  hosts = await startTwoHosts(work);
}, 60_000);
afterEach(() => {
  tmux?.kill();
  tmux = null;
});
afterAll(async () => {
  await hosts?.stop();
});

describe('--hosts in real tmux at 120×40', () => {
  it('2 hosts × 2 ranks: ranks grouped by host as they ran, the stalled rank named with its host, q stops both hosts', async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    mkdirSync(join(work, '.nsa-dbg', 'presets'), { recursive: true });
    writeFileSync(
      join(work, '.nsa-dbg', 'presets', 't-ddp2.yaml'),
      ddpLane({ name: 't-ddp2', description: '2 ranks per node under torchrun', nproc: 2, sigintWaitS: 8 }),
    );
    const remote = join(work, 'remote');
    tmux = new TmuxSession('hosts', 120, 40);
    tmux.start(
      `cd ${work} && node ${BIN} run --lane t-ddp2 --hosts node-a,node-b --ssh-config ${hosts.sshConfig} --runs-dir ${remote} --cwd ${work} --rdzv-port ${await freePort()} -- python3 -u ${DDP_TRAINER} stall`,
      { NSA_DBG_HOME: join(work, 'home') },
    );
    const named = await tmux.waitFor(
      (s) => /ROOT CAUSE rank 3 on node-[ab]/.test(s) && /^[A-Z] r3: backward/m.test(s),
      'the stalled rank named on its host',
      120_000,
    );
    // the header names the hosts; the table groups ranks by host, local rank beside global
    expect(named).toMatch(/^nsa-dbg node-a,node-b · lane t-ddp2/m);
    expect(named).toMatch(/^[A-Z] r3: backward [^\n]*ODD ONE OUT/m);
    const onScreen = /ROOT CAUSE rank 3 on (node-[ab])/.exec(named)![1];
    const rows = named
      .split('\n')
      .filter((l) => /^node-[ab] +\d +>?r\d/.test(l))
      .map((l) => l.replace(/ +/g, ' ').split(' ').slice(0, 3).join(' '));

    tmux.key('q');
    await tmux.waitFor((s) => /quit/i.test(s) && /\by\/n\b|\[y\]/i.test(s), 'quit confirm');
    tmux.key('y');
    await tmux.waitFor((s) => s.includes('[app exited 0]'), 'exit', 60_000);
    // the stop reached both hosts: each agent ended and its launcher recorded how
    const dirs = readdirSync(remote);
    expect(dirs.map((d) => d.replace(/^.*-(node-[ab])$/, '$1')).sort()).toEqual(['node-a', 'node-b']);
    for (const d of dirs) expect(readFileSync(join(remote, d, 'exit_code'), 'utf8')).toMatch(/^\d+\n$/);
    const cell = join(work, 'home', 'runs', dirs[0]!.replace(/-node-[ab]$/, ''));
    expect(readFileSync(join(cell, 'exit_code'), 'utf8')).toMatch(/^\d+\n$/);
    // what the screen said matches where the workers ran (c10d numbers the hosts in join order,
    // so either may hold ranks 2 and 3): the rows host by host in agent order, the culprit's host
    const workers = readFileSync(join(cell, 'nodes.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { task: number; node: string; rank?: number; localRank?: number })
      .filter((w) => w.rank !== undefined)
      .sort((x, y) => x.task - y.task || x.rank! - y.rank!);
    expect(rows).toEqual(workers.map((w) => `${w.node} ${w.localRank} ${w.rank === 3 ? '>' : ''}r${w.rank}`));
    expect(onScreen).toBe(workers.find((w) => w.rank === 3)!.node);
  }, 240_000);
});
