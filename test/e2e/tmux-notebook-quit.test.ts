/**
 * Quitting the notebook while its cell does not stop at once (a 10 min demo step: `.HALT` is only
 * read between steps; the fixture lane waits 10 min before SIGINT): the notebook stays on screen with the terminal raw, shows the same stop
 * countdown as the plain dashboard, and `q` again kills the trainer now. It once gave the terminal
 * back first: ~15 s of blank screen, `q` echoed as a letter, no countdown.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readNotebook } from '../../src/notebook/store.js';
import { TmuxSession } from '../helpers/tmux.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'nsa-dbg');
const LANE = join(import.meta.dirname, '..', 'fixtures', 'lanes', 'slow-halt.yaml');
const COUNTDOWN = /stopping: wrote \.HALT (\d+) s ago; SIGINT in (\d+) s \(q again: kill now\)/;

let tmux: TmuxSession | null = null;
let dir = '';
afterEach(() => {
  tmux?.kill();
  tmux = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('quitting the notebook while its cell stops slowly, in real tmux', () => {
  it('y: the countdown, raw mode kept; q again: killed now; the verdict is written', {
    timeout: 120_000,
  }, async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    dir = mkdtempSync(join(tmpdir(), 'nsa-e2e-nbq-'));
    // the project's own lanes (./.nsa-dbg/presets): the one whose ladder waits longest
    mkdirSync(join(dir, '.nsa-dbg', 'presets'), { recursive: true });
    copyFileSync(LANE, join(dir, '.nsa-dbg', 'presets', 'slow-halt.yaml'));
    const t = new TmuxSession('notebook-quit', 80, 24);
    tmux = t;
    t.start(`cd ${dir} && node ${BIN} --notebook ab.json --demo --steps 5 --step-ms 600000`, {
      NSA_DBG_HOME: join(dir, 'home'),
    });
    await t.waitFor((s) => s.includes('no cells yet'), 'empty notebook');
    t.key('n');
    await t.waitFor((s) => s.includes('new cell from lane'), 'lane picker');
    t.type('slow-halt');
    await t.waitFor((s) => /filter: slow-halt_/.test(s), 'filtered picker');
    t.key('Enter');
    await t.waitFor((s) => /▶ c1 slow-halt · step 0\/5/.test(s), 'c1 running', 30_000);
    // its dashboard tells when the trainer is inside step 1, which reads .HALT only when it ends
    t.key('Enter');
    await t.waitFor((s) => /step 0\/5 \(1 running\)/.test(s), 'the trainer in its first step', 30_000);
    t.key('q');
    await t.waitFor((s) => s.includes('nsa-dbg notebook'), 'back in the notebook');
    t.key('q');
    await t.waitFor((s) => s.includes('stop c1 (its verdict is kept) and quit? y/N'), 'the quit prompt');
    t.key('y');
    const first = await t.waitFor((s) => COUNTDOWN.test(s), 'the stop countdown', 20_000);
    expect(first).toContain('nsa-dbg notebook');
    expect(t.display('#{alternate_on}')).toBe('1');
    const ago = Number(COUNTDOWN.exec(first)![1]);
    // it counts: the screen is alive, not a frame left behind
    await t.waitFor((s) => Number(COUNTDOWN.exec(s)?.[1] ?? ago) > ago, 'the countdown moving on');

    // raw mode: q acts at once (no Enter), and is not echoed as a letter
    t.key('q');
    const end = await t.waitFor((s) => s.includes('[app exited 0]'), 'the notebook closed');
    expect(end).not.toMatch(/^q$/m);
    expect(t.display('#{alternate_on}')).toBe('0');
    expect(t.display('#{cursor_flag}')).toBe('1');

    const c1 = readNotebook(join(dir, 'ab.json')).cells[0]!;
    expect(c1.verdict).toBe('stopped');
    // SIGKILL from the second q, not SIGINT at the ladder's next step
    expect(c1.summary?.exitCode).toBe(137);
  });
});
