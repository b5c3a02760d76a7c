/**
 * A terminal on stdout but not on stdin (`nsa-dbg demo </dev/null`, `echo | nsa-dbg --demo` typed
 * in a shell): one line, exit 2, before anything is launched or drawn, and the pane's terminal is
 * left as it was (no alternate screen, cursor shown). test/integration/no-terminal.test.ts has no
 * terminal on either end.
 */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
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

async function refused(name: string, command: (home: string) => string): Promise<string> {
  expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
  const home = mkdtempSync(join(tmpdir(), 'nsa-notty-'));
  const t = new TmuxSession(name, 120, 20);
  tmux = t;
  t.start(command(home), { NSA_DBG_HOME: home });
  const screen = await t.waitFor((s) => s.includes('[app exited'), 'exit', 30_000);
  expect(screen).toContain('[app exited 2]');
  expect(screen).toContain('nsa-dbg: the dashboard needs a terminal; use --headless');
  expect(screen).not.toMatch(/Raw mode|react-reconciler|DEMO|heartbeats/);
  expect(t.display('#{alternate_on}')).toBe('0');
  expect(t.display('#{cursor_flag}')).toBe('1');
  return home;
}

describe('stdin is not a terminal: one line, exit 2, nothing launched', () => {
  it('nsa-dbg demo </dev/null', async () => {
    const home = await refused('notty-demo', (h) => `node ${BIN} demo --runs-dir ${h}/runs </dev/null`);
    expect(existsSync(join(home, 'runs')) ? readdirSync(join(home, 'runs')) : []).toEqual([]);
  });

  it('echo | nsa-dbg --demo (the notebook)', async () => {
    const home = await refused('notty-nb', () => `echo | node ${BIN} --demo`);
    expect(readdirSync(home)).toEqual([]);
  });

  it('nsa-dbg run --lane L -- COMMAND </dev/null: the command never runs', async () => {
    const home = await refused(
      'notty-run',
      (h) => `node ${BIN} run --lane baseline --runs-dir ${h}/runs -- touch ${h}/trainer-ran </dev/null`,
    );
    expect(existsSync(join(home, 'trainer-ran'))).toBe(false);
  });
});
