/**
 * One 2 MiB line with no newline until its end, then step lines: the dashboard shows the steps and a
 * cut line with its true length, keys still work, and the evidence keeps every byte. Before lines
 * were bounded, Ink measured the megabyte line on every frame: the screen stayed at `step 0 · 0
 * lines` and `q`, Ctrl+C and SIGTERM went unanswered.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOG_LINE_CHARS } from '../../src/session/log-line.js';
import { TmuxSession } from '../helpers/tmux.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'nsa-dbg');
const TRAINER = join(import.meta.dirname, '..', 'fixtures', 'trainers', 'long_line.py');
const LINE_BYTES = 2 * 1024 * 1024;

let tmux: TmuxSession | null = null;
afterEach(() => {
  tmux?.kill();
  tmux = null;
});

describe('a 2 MiB line in real tmux', () => {
  it('is drawn cut with its length; the steps after it show and q answers at once', async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    const t = new TmuxSession('long-line', 120, 30);
    tmux = t;
    const runs = mkdtempSync(join(tmpdir(), 'nsa-e2e-long-'));
    t.start(`${BIN} run --lane baseline --runs-dir ${runs} -- python3 -u ${TRAINER}`, {
      NSA_DBG_HOME: mkdtempSync(join(tmpdir(), 'nsa-home-')),
      LONG_LINE_BYTES: String(LINE_BYTES),
      LONG_LINE_HOLD_S: '120',
    });
    const screen = await t.waitFor(
      (s) => /step [1-3]\/200/.test(s) && /step 0003 \|/.test(s),
      'the steps in the header and step 3 in the log',
    );
    // the cut line: a head of A's, then how many bytes it no longer shows (of 2 MiB + nothing else)
    const cut = screen.split('\n').find((l) => l.startsWith('AAAA'));
    expect(cut).toMatch(/^A+…\[\+2,09\d,\d{3} bytes\]\s*$/);
    const shown = Number(/\[\+([\d,]+) bytes\]/.exec(cut!)![1]!.replace(/,/g, ''));
    // the view keeps the line's first LOG_LINE_CHARS characters (one byte each here)
    expect(shown).toBe(LINE_BYTES - LOG_LINE_CHARS);
    // keys are answered: help opens and closes, q asks (one key at a time: the dashboard takes a
    // chunk of several different keys, which a loaded machine can deliver, as no key)
    t.key('?');
    await t.waitFor((s) => /Esc or \? closes/.test(s) && /SIGUSR1 to the trainer/.test(s), 'help');
    t.key('?');
    await t.waitFor((s) => !/Esc or \? closes/.test(s), 'help closed');
    t.key('q');
    await t.waitFor((s) => /Quit nsa-dbg\? y\/n/.test(s), 'the quit prompt');
    t.key('y');
    // the trainer sleeps through .HALT; a second q kills the run at once
    await t.waitFor((s) => /q again|SIGINT|SIGKILL|stopping/i.test(s) || /\[app exited/.test(s), 'stopping');
    t.key('q');
    await t.waitFor((s) => /\[app exited \d+\]/.test(s), 'nsa-dbg exits', 30_000);
    // the evidence keeps the whole line
    const [runId] = readdirSync(runs);
    expect(statSync(join(runs, runId!, 'stdout.log')).size).toBeGreaterThan(LINE_BYTES);
  });

  it('SIGTERM to nsa-dbg after the line: answered, the terminal given back, exit 143', async () => {
    const t = new TmuxSession('long-line-term', 120, 30);
    tmux = t;
    const runs = mkdtempSync(join(tmpdir(), 'nsa-e2e-long-'));
    t.start(`${BIN} run --lane baseline --runs-dir ${runs} -- python3 -u ${TRAINER}`, {
      NSA_DBG_HOME: mkdtempSync(join(tmpdir(), 'nsa-home-')),
      LONG_LINE_BYTES: String(LINE_BYTES),
      LONG_LINE_HOLD_S: '120',
    });
    await t.waitFor((s) => /step 0003 \|/.test(s), 'step 3 in the log');
    const shell = t.display('#{pane_pid}');
    const node = execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', shell], { encoding: 'utf8' })
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .find(([, comm]) => comm === 'node');
    process.kill(Number(node![0]), 'SIGTERM');
    await t.waitFor((s) => /\[app exited 143\]/.test(s), 'exit 143', 40_000);
    expect(t.display('#{alternate_on}')).toBe('0');
  });
});
