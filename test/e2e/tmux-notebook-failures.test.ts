/**
 * The notebook when things go wrong around it, in real tmux: a broken lane file, its folder turning
 * read-only while it is open. It keeps running, says what happened in one line, and quits cleanly.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
    await t.waitFor((s) => s.includes('nsa-dbg notebook') && /4 cells/.test(s), 'the notebook, 4 cells');
    writeFileSync(trigger, '');
    await waitUntil(() => existsSync(`${trigger}.done`), { timeoutMs: 10_000, what: 'the folder read-only' });
    t.key('x');
    await t.waitFor((s) => /delete c1 \S+\? y\/N/.test(s), 'the delete prompt');
    t.key('y');
    const after = await t.waitFor(
      (s) => /cannot write the notebook \S+nb\.json: read-only file system \(EROFS\)/.test(s),
      'the write failure, in one line',
    );
    expect(after).toMatch(/4 cells/);
    // still answering keys
    t.key('j');
    t.key('x');
    await t.waitFor((s) => /delete c2 \S+\? y\/N/.test(s), 'the next prompt');
    t.key('n');
    t.key('q');
    await t.waitFor((s) => /\[app exited 0\]/.test(s), 'exit 0');
  });
});
