/**
 * The notebook when things go wrong around it, in real tmux: a broken lane file, its folder turning
 * read-only while it is open. It keeps running, says what happened in one line, and quits cleanly.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readOnlyAvailable, readOnlyScript } from '../helpers/read-only.js';
import { TmuxSession } from '../helpers/tmux.js';
import { waitUntil } from '../helpers/wait.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'nsa-dbg');
const FIXTURE_NB = join(import.meta.dirname, '..', 'fixtures', 'report', 'notebook.json');
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

let tmux: TmuxSession | null = null;
let dir = '';
afterEach(() => {
  tmux?.kill();
  tmux = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function session(name: string): TmuxSession {
  expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
  dir = mkdtempSync(join(tmpdir(), 'nsa-e2e-nbf-'));
  tmux = new TmuxSession(name, 120, 30);
  return tmux;
}

/** the nsa-dbg node process: the child of the pane's shell */
function appPid(t: TmuxSession): number {
  const shell = t.display('#{pane_pid}');
  const children = execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', shell], { encoding: 'utf8' });
  const node = children
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .find(([, comm]) => comm === 'node');
  if (!node?.[0]) throw new Error(`no node process under the pane's shell:\n${children}`);
  return Number(node[0]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the notebook in real tmux, when things go wrong', () => {
  it('a broken lane file: the notebook opens and says so; the lanes work; q exits 0 and frees the lock', async () => {
    const t = session('nb-broken-lane');
    mkdirSync(join(dir, '.nsa-dbg', 'presets'), { recursive: true });
    writeFileSync(
      join(dir, '.nsa-dbg', 'presets', 'x.yaml'),
      'name: x\ndescription: broken\nenv: {A: [1, 2\n',
    );
    t.start(`cd ${q(dir)} && ${BIN} --notebook nb.json`, { NSA_DBG_HOME: join(dir, 'home') });
    const first = await t.waitFor((s) => s.includes('nsa-dbg notebook'), 'the notebook');
    expect(first).toMatch(/lane file skipped: \S*x\.yaml:4:1: field "env"/);
    t.key('n');
    const picker = await t.waitFor((s) => s.includes('new cell from lane'), 'the lane picker');
    expect(picker).toMatch(/batched-prefill/);
    t.key('Escape');
    await t.waitFor((s) => !s.includes('new cell from lane'), 'the picker closed');
    t.key('q');
    await t.waitFor((s) => /\[app exited 0\]/.test(s), 'exit 0');
    expect(existsSync(join(dir, 'nb.json.lock'))).toBe(false);
  });

  it('n shows the command a new cell runs, and where; a trainer that is not there is said, not run', async () => {
    const t = session('nb-command');
    t.start(`cd ${q(dir)} && ${BIN} --notebook nb.json`, { NSA_DBG_HOME: join(dir, 'home') });
    await t.waitFor((s) => s.includes('no cells yet'), 'the empty notebook');
    t.key('n');
    await t.waitFor((s) => s.includes('new cell from lane'), 'the lane picker');
    t.type('baseline');
    const picker = await t.waitFor((s) => /filter: baseline_/.test(s), 'the filtered picker');
    // plain `nsa-dbg`: the lanes' default trainer, nsa-vibe's, from this folder
    expect(picker).toMatch(
      /^runs: python3 -u scripts\/train_showcase\.py --dataset synthetic --ddp 0 --steps 200\s*$/m,
    );
    expect(picker).toContain(`in: ${dir}`);
    t.key('Enter');
    const refused = await t.waitFor((s) => /no such trainer script/.test(s), 'the refusal');
    expect(refused).toMatch(/no such trainer script: scripts\/train_showcase\.py \(in /);
    expect(refused).toMatch(/no cells yet/);
    t.key('q');
    await t.waitFor((s) => /\[app exited 0\]/.test(s), 'exit 0');
  });

  it('a command that does not exist: the notebook says so and adds no cell', async () => {
    const t = session('nb-no-command');
    t.start(`cd ${q(dir)} && ${BIN} --notebook nb.json -- nosuchcmd_xyz --flag`, {
      NSA_DBG_HOME: join(dir, 'home'),
    });
    await t.waitFor((s) => s.includes('no cells yet'), 'the empty notebook');
    t.type(':lane batched-prefill');
    t.key('Enter');
    const refused = await t.waitFor((s) => /command not found: nosuchcmd_xyz/.test(s), 'the refusal');
    expect(refused).toMatch(/no cells yet/);
    t.key('q');
    await t.waitFor((s) => /\[app exited 0\]/.test(s), 'exit 0');
  });

  it('kill -9 of nsa-dbg while a cell runs: reopened, the cell is finished from its evidence, interrupted', async () => {
    const t = session('nb-killed');
    const env = { NSA_DBG_HOME: join(dir, 'home') };
    t.start(`cd ${q(dir)} && ${BIN} --notebook nb.json --demo --steps 1000 --step-ms 100`, env);
    await t.waitFor((s) => s.includes('no cells yet'), 'the empty notebook');
    t.type(':lane batched-prefill');
    t.key('Enter');
    await t.waitFor((s) => /c1\s+RUN\s+batched-prefill/.test(s), 'c1 running');
    const evidence = join(dir, 'nb.evidence');
    const trainer = await waitUntil(
      () => {
        const run = readdirSync(evidence)[0];
        return run && existsSync(join(evidence, run, 'pid'))
          ? Number(readFileSync(join(evidence, run, 'pid'), 'utf8'))
          : null;
      },
      { timeoutMs: 20_000, what: 'the trainer pid' },
    );
    process.kill(appPid(t), 'SIGKILL');
    await t.waitFor((s) => /\[app exited 137\]/.test(s), 'nsa-dbg killed');
    // its PTY closed, the trainer got SIGHUP: nothing will ever write its exit_code
    await waitUntil(() => !alive(trainer), { timeoutMs: 20_000, what: 'the trainer gone' });
    t.kill();

    const again = new TmuxSession('nb-killed-again', 120, 30);
    tmux = again;
    again.start(`cd ${q(dir)} && ${BIN} --notebook nb.json --demo`, env);
    const list = await again.waitFor((s) => s.includes('nsa-dbg notebook') && /c1 /.test(s), 'the notebook');
    expect(list).not.toMatch(/RUN|running…/);
    expect(list).toMatch(/c1\s+NO-GO batched-prefill\s+incomplete: .*\(interrupted\)/);
    // its dashboard: the run has ended (no live pid, no suspicion left hanging)
    again.key('Enter');
    const dash = await again.waitFor(
      (s) => /lane batched-prefill/.test(s) && /exited/.test(s),
      'the ended run',
    );
    expect(dash).not.toMatch(/SUSPECT/);
    again.key('q');
    await again.waitFor((s) => s.includes('back to the notebook'), 'back prompt');
    again.key('y');
    await again.waitFor((s) => s.includes('nsa-dbg notebook'), 'the notebook');
    again.key('q');
    await again.waitFor((s) => /\[app exited 0\]/.test(s), 'exit 0');
  });

  it('the folder turns read-only: x, y says why the cell stays, the view goes on, q exits 0', async () => {
    expect(readOnlyAvailable(), 'unshare -rm and tmpfs are needed for read-only storage').toBe(true);
    const t = session('nb-read-only');
    const seed = join(dir, 'seed');
    const mnt = join(dir, 'mnt');
    mkdirSync(seed);
    mkdirSync(mnt);
    copyFileSync(FIXTURE_NB, join(seed, 'nb.json'));
    const trigger = join(dir, 'read-only-now');
    const app = `${BIN} --notebook ${q(join(mnt, 'nb.json'))}`;
    t.start(`unshare -rm sh -c ${q(readOnlyScript(mnt, app, { seed, trigger }))}`, {
      NSA_DBG_HOME: join(dir, 'home'),
    });
    const cells = JSON.parse(readFileSync(FIXTURE_NB, 'utf8')).cells.length;
    const count = new RegExp(`· ${cells} cells`);
    await t.waitFor((s) => s.includes('nsa-dbg notebook') && count.test(s), `the notebook, ${cells} cells`);
    writeFileSync(trigger, '');
    await waitUntil(() => existsSync(`${trigger}.done`), { timeoutMs: 10_000, what: 'the folder read-only' });
    t.key('x');
    await t.waitFor((s) => /delete c1 \S+\? y\/N/.test(s), 'the delete prompt');
    t.key('y');
    const after = await t.waitFor(
      (s) => /cannot write the notebook \S+nb\.json: read-only file system \(EROFS\)/.test(s),
      'the write failure, in one line',
    );
    expect(after).toMatch(count); // none deleted
    // still answering keys
    t.key('j');
    t.key('x');
    await t.waitFor((s) => /delete c2 \S+\? y\/N/.test(s), 'the next prompt');
    t.key('n');
    t.key('q');
    await t.waitFor((s) => /\[app exited 0\]/.test(s), 'exit 0');
  });
});
