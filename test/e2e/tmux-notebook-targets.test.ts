/**
 * The notebook TUI runs its cells where the command line says, as `run` does: on a box over real
 * OpenSSH (`--host`), as a job of the real one-box Slurm cluster (`--slurm`), and as one torchrun
 * agent per host over two real sshd's (`--hosts`). Each cell is made from the lane picker in real
 * tmux, ends with its verdict in the list, records its target, and `analyze` of its evidence
 * folder (beside the notebook, wherever the run was) agrees with the cell.
 *
 * Needs tmux, sshd, /usr/bin/python3 with torch, slurm-wlm and munge, and root for the cluster
 * (.ci/run installs them).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { readNotebook } from '../../src/notebook/store.js';
import { BIN, runCli } from '../helpers/cli.js';
import { DDP_TRAINER, ddpLane } from '../helpers/ddp-lane.js';
import { freePort } from '../helpers/ports.js';
import { type SlurmCluster, startSlurmCluster } from '../helpers/slurm-cluster.js';
import { startSshd, type TestSshd } from '../helpers/sshd.js';
import { TmuxSession } from '../helpers/tmux.js';
import { startTwoHosts, type TwoHosts } from '../helpers/two-hosts.js';

const work = mkdtempSync(join(tmpdir(), 'nsa-e2e-nbt-'));
let tmux: TmuxSession | null = null;
const stops: Array<() => Promise<void>> = [];
afterEach(() => {
  tmux?.kill();
  tmux = null;
});
afterAll(async () => {
  for (const s of stops) await s().catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
});

const LANE = ddpLane({
  name: 't-ddp2',
  description: '2 ranks per node under torchrun',
  nproc: 2,
  sigintWaitS: 8,
});

/** a run that ended cleanly: pass, or slow when the loaded box held a step back (both GO) */
const CLEAN = /^(pass|slow)$/;

/** a project folder with the test lane, and nsa-dbg's home in it */
function project(name: string): { cwd: string; home: string } {
  const cwd = join(work, name);
  mkdirSync(join(cwd, '.nsa-dbg', 'presets'), { recursive: true });
  writeFileSync(join(cwd, '.nsa-dbg', 'presets', 't-ddp2.yaml'), LANE);
  return { cwd, home: join(cwd, 'home') };
}

/**
 * The notebook on `args` in tmux: `n`, the lane filtered by `filter`, Enter; then the cell's
 * verdict in the list; q. Returns the notebook's one cell and what `analyze` says of its folder.
 */
async function cellFromTui(
  o: { cwd: string; home: string; args: string; filter: string; lane: string; env?: Record<string, string> },
  verdict: RegExp,
) {
  tmux = new TmuxSession('nbtargets', 120, 40);
  tmux.start(`cd ${o.cwd} && node ${BIN} --notebook nb.json ${o.args}`, { NSA_DBG_HOME: o.home, ...o.env });
  const t = tmux;
  await t.waitFor(
    (s) => s.includes('nsa-dbg notebook') && s.includes('no cells yet'),
    'empty notebook',
    30_000,
  );
  t.key('n');
  await t.waitFor((s) => s.includes('new cell from lane'), 'lane picker');
  t.type(o.filter);
  await t.waitFor((s) => s.includes(`filter: ${o.filter}_`), 'filtered picker');
  t.key('Enter');
  const done = await t.waitFor(
    (s) => new RegExp(`c1\\s+(GO|NO-GO)\\s+${o.lane}`).test(s),
    `c1 ${o.lane} ended with its verdict`,
    150_000,
  );
  t.key('q');
  await t.waitFor((s) => s.includes('[app exited'), 'exit', 30_000);
  const nb = readNotebook(join(o.cwd, 'nb.json'));
  expect(nb.cells).toHaveLength(1);
  const cell = nb.cells[0]!;
  expect(cell.verdict).toMatch(verdict);
  const folder = resolve(o.cwd, cell.evidenceDir);
  const an = await runCli(['analyze', folder, '--json'], {
    cwd: o.cwd,
    env: { NSA_DBG_HOME: o.home, ...o.env },
  });
  const offline = JSON.parse(an.stdout);
  expect(offline.verdict).toBe(cell.verdict);
  expect(offline.stepsReached).toBe((cell.analysis as { stepsReached: number }).stepsReached);
  return { cell, screen: done, folder, offline };
}

describe('notebook cells on every target, from the notebook TUI in real tmux', () => {
  it('--host: a demo cell runs on the box over OpenSSH, its evidence mirrored beside the notebook', async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    const sshd: TestSshd = await startSshd();
    stops.push(() => sshd.stop());
    sshd.trustHostKey();
    const { cwd, home } = project('host');
    const runs = join(work, 'host-remote');
    const { cell, folder } = await cellFromTui(
      {
        cwd,
        home,
        args: `--host target --ssh-config ${sshd.configPath} --runs-dir ${runs} --demo --steps 6 --step-ms 100`,
        filter: 'batched',
        lane: 'batched-prefill',
      },
      /^pass$/,
    );
    expect(cell.target).toMatch(/@/);
    expect(cell.target).not.toBe('local');
    // the run happened in the box's runs dir; its bytes are in the cell's folder here
    expect(cell.runDir.startsWith(runs)).toBe(true);
    expect(readFileSync(join(folder, 'stdout.log'))).toEqual(readFileSync(join(cell.runDir, 'stdout.log')));
  }, 240_000);

  it('--slurm: a torchrun cell runs as a job of the one-box cluster, 2 agents × 2 ranks', async () => {
    const cluster: SlurmCluster = await startSlurmCluster();
    stops.push(() => cluster.stop());
    const { cwd, home } = project('slurm');
    const slurm = `--slurm --nodes 1 --sbatch-arg=--ntasks-per-node=2 --rdzv-port ${await freePort()}`;
    const { cell, offline } = await cellFromTui(
      {
        cwd,
        home,
        args: `${slurm} --runs-dir ${join(cwd, 'runs')} -- python3 -u ${DDP_TRAINER} ok`,
        filter: 't-ddp',
        lane: 't-ddp2',
        env: cluster.env,
      },
      // a clean run; four real gloo ranks and two agents on the 2-core CI box under the suite's
      // other tests can have a step past 3× its median, which the verdict rightly calls slow (GO)
      CLEAN,
    );
    expect(cell.target).toMatch(/^slurm/);
    expect(offline.ranks).toEqual([0, 1, 2, 3]);
    expect(readFileSync(join(cell.runDir, 'job_id'), 'utf8')).toMatch(/^\d+\n$/);
  }, 300_000);

  it('--hosts: a torchrun cell runs as one agent per host over two sshd’s, its ranks placed on their hosts', async () => {
    const hostsDir = join(work, 'two-hosts');
    mkdirSync(hostsDir, { recursive: true });
    const hosts: TwoHosts = await startTwoHosts(hostsDir);
    stops.push(() => hosts.stop());
    const { cwd, home } = project('hosts');
    const args = `--hosts node-a,node-b --ssh-config ${hosts.sshConfig} --runs-dir ${join(cwd, 'remote')} --cwd ${cwd} --rdzv-port ${await freePort()} -- python3 -u ${DDP_TRAINER} ok`;
    const { cell, folder, offline } = await cellFromTui(
      { cwd, home, args, filter: 't-ddp', lane: 't-ddp2' },
      CLEAN,
    );
    expect(cell.target).toBe('node-a,node-b');
    expect(offline.ranks).toEqual([0, 1, 2, 3]);
    // each host's folder mirrored under the cell, merged with host labels as srun --label does
    for (const alias of ['node-a', 'node-b'])
      expect(readFileSync(join(folder, 'hosts', alias, 'exit_code'), 'utf8')).toMatch(/^\d+\n$/);
    // (rank 0 prints the steps, on whichever host joined the rendezvous first)
    expect(readFileSync(join(folder, 'stdout.log'), 'utf8')).toMatch(/^[01]: step 0001 \| loss/m);
  }, 240_000);
});
