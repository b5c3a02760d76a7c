/**
 * Ctrl+Z suspends the dashboard as `less` does, in a real tmux pane under an interactive shell
 * with job control: the terminal comes back to the shell (main screen, cursor shown), the job is
 * stopped, and `fg` brings back the whole dashboard with its keys working (raw mode on again).
 * The same for a SIGTSTP sent from outside (`kill -TSTP`), which once left the screen garbled and
 * the keys dead after `fg`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TmuxSession } from '../helpers/tmux.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'nsa-dbg');

let tmux: TmuxSession | null = null;
afterEach(() => {
  tmux?.kill();
  tmux = null;
});

/** the nsa-dbg node process: the `node` among the pane's descendants */
function appPid(t: TmuxSession): number {
  const table = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,comm='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((r) => r.length === 3)
    .map(([pid, ppid, comm]) => ({ pid: Number(pid), ppid: Number(ppid), comm }));
  const ours = new Set([Number(t.display('#{pane_pid}'))]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table)
      if (ours.has(p.ppid) && !ours.has(p.pid)) {
        ours.add(p.pid);
        grew = true;
      }
  }
  const node = table.find((p) => ours.has(p.pid) && p.comm === 'node');
  if (!node) throw new Error('no node process in the pane');
  return node.pid;
}

const dashboard = (s: string) => /DEMO/.test(s) && /heartbeats/.test(s) && /d dump {2}s hot frames/.test(s);

/**
 * `stops`: how many times the shell has said so by now (an earlier stop's line is still on its
 * screen); `n` tells this stop's command from an earlier one's
 */
async function expectStopped(t: TmuxSession, n: number, stops = 1): Promise<void> {
  await t.waitFor(
    (s) => (s.match(/Stopped\s+.*node /g) ?? []).length >= stops,
    'the shell reports the job stopped',
  );
  expect(t.display('#{alternate_on}')).toBe('0');
  expect(t.display('#{cursor_flag}')).toBe('1');
  // the shell has the terminal: a command typed now runs
  t.type(`echo shell-$((40+${n}))`);
  t.key('Enter');
  await t.waitFor((s) => new RegExp(`^shell-${40 + n}$`, 'm').test(s), 'the shell runs a command');
}

async function expectBack(t: TmuxSession, view: (s: string) => boolean = dashboard): Promise<void> {
  t.type('fg');
  t.key('Enter');
  const screen = await t.waitFor(view, 'the whole view again after fg');
  expect(screen).not.toMatch(/shell-4\d|Stopped/);
  expect(t.display('#{alternate_on}')).toBe('1');
  expect(t.display('#{cursor_flag}')).toBe('0');
  // raw mode is back: a key acts at once, without Enter
  t.key('?');
  await t.waitFor((s) => /Ctrl\+Z +suspend to the shell/.test(s), 'the help, listing Ctrl+Z');
  t.key('?');
  await t.waitFor(view, 'the help closed');
}

/** a shell with job control in the pane, running `command` */
async function startInShell(name: string, command: string): Promise<TmuxSession> {
  expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
  const t = new TmuxSession(name, 100, 30);
  tmux = t;
  t.start('bash --norc --noprofile -i', { PS1: '$ ' });
  await t.waitFor((s) => /^\$\s*$/m.test(s), 'the shell prompt');
  t.type(command);
  t.key('Enter');
  return t;
}

describe('suspend and resume in real tmux', () => {
  it('Ctrl+Z, fg; kill -TSTP from outside, fg; then q quits as usual', { timeout: 120_000 }, async () => {
    const runs = mkdtempSync(join(tmpdir(), 'nsa-e2e-'));
    const t = await startInShell(
      'suspend',
      `node ${BIN} demo --lane batched-prefill --step-ms 100 --steps 100000 --runs-dir ${runs}`,
    );
    await t.waitFor((s) => dashboard(s) && /step [1-9]/.test(s), 'dashboard', 30_000);

    t.key('C-z');
    await expectStopped(t, 1);
    await expectBack(t);

    process.kill(appPid(t), 'SIGTSTP');
    await expectStopped(t, 2, 2);
    await expectBack(t);

    t.key('q');
    await t.waitFor((s) => /Quit nsa-dbg\? y\/n/.test(s), 'quit confirm');
    t.key('y');
    await t.waitFor(
      (s) => t.display('#{alternate_on}') === '0' && /^\$\s*$/m.test(s),
      'the shell again',
      30_000,
    );
  });

  it('the notebook: Ctrl+Z, fg, and its keys work again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-e2e-'));
    const t = await startInShell(
      'suspend-nb',
      `NSA_DBG_HOME=${dir} node ${BIN} --notebook ${dir}/nb.json --demo`,
    );
    const notebook = (s: string) => s.includes('nsa-dbg notebook') && s.includes('no cells yet');
    await t.waitFor(notebook, 'the notebook', 30_000);
    t.key('C-z');
    await expectStopped(t, 3);
    await expectBack(t, notebook);
    t.key('q');
    await t.waitFor(
      (s) => t.display('#{alternate_on}') === '0' && /^\$\s*$/m.test(s),
      'the shell again',
      30_000,
    );
  });
});
