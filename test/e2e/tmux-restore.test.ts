/**
 * The terminal is given back however nsa-dbg ends: q, SIGINT, SIGTERM, SIGHUP, an uncaught
 * exception. After each, in the same real tmux pane: the cursor is visible, the alternate screen is
 * left, no frame of the dashboard (or its quit prompt) is left on screen, and the terminal echoes
 * what is typed (raw mode turns echo off, so an echo means it was restored).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TmuxSession } from '../helpers/tmux.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'nsa-dbg');
const CRASH = pathToFileURL(join(import.meta.dirname, '..', 'fixtures', 'crash_on_usr2.mjs')).href;

let tmux: TmuxSession | null = null;
afterEach(() => {
  tmux?.kill();
  tmux = null;
});

/** A demo run that does not stall and stops within a step of being asked (.HALT is polled per step). */
async function startDemo(name: string, preload = ''): Promise<TmuxSession> {
  expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
  const t = new TmuxSession(name, 100, 30);
  tmux = t;
  const runs = mkdtempSync(join(tmpdir(), 'nsa-e2e-'));
  t.start(
    `node ${preload} ${BIN} demo --lane batched-prefill --step-ms 100 --steps 100000 --runs-dir ${runs}`,
    { LC_ALL: 'C.UTF-8' },
  );
  await t.waitFor((s) => /DEMO/.test(s) && /heartbeats/.test(s) && /step [1-9]/.test(s), 'dashboard');
  expect(t.display('#{alternate_on}')).toBe('1');
  expect(t.display('#{cursor_flag}')).toBe('0');
  return t;
}

/** The nsa-dbg node process: the child of the pane's shell. */
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

async function expectRestored(t: TmuxSession, exitCode: number): Promise<string> {
  const screen = await t.waitFor((s) => s.includes(`[app exited ${exitCode}]`), `exit ${exitCode}`, 40_000);
  expect(screen).not.toMatch(/heartbeats|DEMO|Quit nsa-dbg|nsa-dbg local/);
  expect(t.display('#{cursor_flag}')).toBe('1');
  expect(t.display('#{alternate_on}')).toBe('0');
  t.type('typed-after-exit');
  await t.waitFor((s) => s.includes('typed-after-exit'), 'the terminal echoes typed input (raw mode off)');
  return screen;
}

describe('the terminal is restored in real tmux', () => {
  it('on q: the quit prompt is not left behind', async () => {
    const t = await startDemo('restore-q');
    t.key('q');
    await t.waitFor((s) => /Quit nsa-dbg\? y\/n/.test(s), 'quit confirm');
    t.key('y');
    await expectRestored(t, 0);
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)('on %s to nsa-dbg: the run is stopped as on q, exit %i', async (signal, code) => {
    const t = await startDemo(`restore-${signal}`);
    process.kill(appPid(t), signal);
    await expectRestored(t, code);
  });

  it('on an uncaught exception: the error is printed on the restored screen', async () => {
    const t = await startDemo('restore-crash', `--import ${CRASH}`);
    process.kill(appPid(t), 'SIGUSR2');
    const screen = await expectRestored(t, 1);
    expect(screen).toContain('injected crash for the terminal-restore test');
  });
});
