import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { startSshd, type TestSshd } from '../helpers/sshd.js';
import { TmuxSession } from '../helpers/tmux.js';

let sshd: TestSshd;
let tmux: TmuxSession | null = null;
beforeAll(async () => {
  // DEBUG1: a wait that fails shows each channel's requests as sshd saw them (the run's terminal
  // once opened a channel whose shell never printed its pid line)
  sshd = await startSshd({ logLevel: 'DEBUG1' });
  sshd.trustHostKey();
});
afterAll(async () => {
  tmux?.kill();
  await sshd?.stop();
});

describe('the dashboard over SSH in real tmux', () => {
  it('live dashboard, d dump, l lane switch, q leaves the run running, attach shows it again', async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    const runs = mkdtempSync(join(tmpdir(), 'nsa-e2e-remote-'));
    const home = mkdtempSync(join(tmpdir(), 'nsa-e2e-home-'));
    const host = `--host target --ssh-config ${sshd.configPath} --runs-dir ${runs}`;
    tmux = new TmuxSession('ssh', 100, 30);
    tmux.alsoOnFailure = () => `sshd log (last 80 lines):\n${sshd.logTail(80)}`;
    // the engine log rides along: a wait that fails shows what the app was doing (the link, the PTY)
    tmux.start(`node ${BIN} demo ${host} --step-ms 150 --steps 400`, {
      NSA_DBG_HOME: home,
      NSA_DBG_LOG: join(home, 'engine.log'),
    });

    await tmux.waitFor((s) => s.includes('@target') && /DEMO/.test(s), 'remote dashboard');
    // silence makes the rank suspect at once; the remote checks run over the same connection
    await tmux.waitFor(
      (s) => /(SUSPECT|HANG)[^\n]*step 6/.test(s),
      'stall suspected at step 6 over ssh',
      40_000,
    );
    tmux.key('d');
    await tmux.waitFor((s) => s.includes('_forward_prefill_sequential'), 'remote stack dump', 8000);

    tmux.key('l');
    await tmux.waitFor((s) => s.includes('batched-prefill'), 'lane picker');
    tmux.type('batched');
    await tmux.waitFor((s) => /filter: batched/.test(s), 'filtered picker');
    tmux.key('Enter');
    await tmux.waitFor((s) => /y\/n/.test(s), 'lane confirm');
    tmux.key('y');
    await tmux.waitFor(
      (s) => /lane batched-prefill/.test(s) && /step 0*(?:[7-9]|\d\d)\b/.test(s),
      'new lane past step 5',
      40_000,
    );

    // the run's own terminal: the remote tmux pane with the trainer's output, then back
    tmux.key('t');
    await tmux.waitFor(
      (s) => /step 00\d\d \| loss/.test(s) && !/heartbeats/.test(s),
      'remote tmux pane',
      25_000,
    );
    tmux.key('C-]');
    await tmux.waitFor((s) => /heartbeats/.test(s) && /back from the run/.test(s), 'dashboard again', 15_000);

    tmux.key('q');
    const confirm = await tmux.waitFor((s) => /y\/n/.test(s), 'quit confirm');
    expect(confirm).toMatch(/keeps running/);
    tmux.key('y');
    await tmux.waitFor((s) => s.includes('[app exited 0]'), 'clean exit', 30_000);

    // the batched run is still alive on the box after the UI left
    const ids = readdirSync(runs).sort();
    expect(ids).toHaveLength(2);
    const batchedDir = join(runs, ids[1]!);
    const pid = Number(readFileSync(join(batchedDir, 'pid'), 'utf8'));
    expect(existsSync(`/proc/${pid}`)).toBe(true);

    tmux.kill();
    tmux = new TmuxSession('ssh2', 100, 30);
    tmux.alsoOnFailure = () => `sshd log (last 80 lines):\n${sshd.logTail(80)}`;
    tmux.start(`node ${BIN} attach ${host} ${ids[1]}`, { NSA_DBG_HOME: home });
    await tmux.waitFor(
      (s) => /lane batched-prefill/.test(s) && /running/.test(s),
      'attached dashboard',
      30_000,
    );
    tmux.key('q');
    await tmux.waitFor((s) => /keeps running/.test(s), 'quit confirm after attach');
    tmux.key('y');
    await tmux.waitFor((s) => s.includes('[app exited 0]'), 'clean exit after attach', 30_000);
    process.kill(pid, 'SIGKILL');
  }, 150_000); // two dashboards, two runs, a lane switch and the run's own terminal, over one ssh link each

  it('shows an outage while the box is unreachable and carries on when it is back', async () => {
    const runs = mkdtempSync(join(tmpdir(), 'nsa-e2e-remote-'));
    const home = mkdtempSync(join(tmpdir(), 'nsa-e2e-home-'));
    tmux?.kill();
    tmux = new TmuxSession('outage', 100, 30);
    tmux.start(
      `node ${BIN} demo --host target --ssh-config ${sshd.configPath} --runs-dir ${runs} --lane batched-prefill --step-ms 150 --steps 400`,
      { NSA_DBG_HOME: home },
    );
    const stepOf = (s: string) => Number(/step (\d+)\/400/.exec(s)?.[1] ?? 0);
    await tmux.waitFor((s) => stepOf(s) >= 3, 'remote run under way', 30_000);
    await sshd.stopListener();
    const down = await tmux.waitFor(
      (s) => /connection (reconnecting|down)/.test(s),
      'outage in the header',
      20_000,
    );
    const stepAtOutage = stepOf(down);
    await tmux.waitFor(
      (s) => /connection (reconnecting|down) · for [1-9]/.test(s),
      'outage length counting',
      10_000,
    );
    await sshd.startListener();
    await tmux.waitFor(
      (s) => !/connection (reconnecting|down)/.test(s) && stepOf(s) > stepAtOutage + 3,
      'back and following',
      40_000,
    );
    tmux.key('q');
    await tmux.waitFor((s) => /keeps running/.test(s), 'quit confirm');
    tmux.key('y');
    await tmux.waitFor((s) => s.includes('[app exited 0]'), 'clean exit', 30_000);
  });
});
