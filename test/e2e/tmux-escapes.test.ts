/**
 * A trainer that prints terminal escapes (clear screen, titles, OSC 52, cursor moves, the alternate
 * screen, a full reset, bidi overrides, 8-bit C1) through the real binary in real tmux: every line
 * reads whole in the log pane, and nothing the sequences carry reaches the pane, its title, the
 * window name or tmux's paste buffers. tmux is told to accept what a leak would set (clipboard
 * writes, renames), so a leak is visible here rather than silently dropped.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TmuxSession } from '../helpers/tmux.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'nsa-dbg');
const ESCAPE_LOG = join(import.meta.dirname, '..', 'fixtures', 'escape_log.py');

/** What each line of escape_log.py reads once its sequences are gone. */
const CLEAN_LINES = [
  'clear-beforeclear-after',
  'title-osc0',
  'title-osc2',
  'clip-osc52',
  'move-cursor',
  'alt-screen',
  'win-name',
  'dcs-pass',
  'ris-reset',
  'bidi-REVERSED-iso-end',
  'c1-\ufffd2J-raw',
  'c1u--cp',
  'tab     here',
  'bs-abcXYZ',
];

let tmux: TmuxSession | null = null;
afterEach(() => {
  tmux?.kill();
  tmux = null;
});

function expectNothingLeaked(t: TmuxSession, screen: string): void {
  expect(screen).not.toContain('PWNED');
  expect(t.display('#{pane_title}')).not.toContain('PWNED');
  expect(t.display('#{window_name}')).not.toContain('PWNED');
  expect(t.buffers()).toEqual([]);
}

describe('an escape-laden log in real tmux', () => {
  it('is drawn as plain text; the pane, its title and the clipboard are untouched', async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    tmux = new TmuxSession('escapes', 120, 40);
    const runs = mkdtempSync(join(tmpdir(), 'nsa-e2e-'));
    tmux.start(
      `node ${BIN} run --lane baseline --runs-dir ${runs} -- python3 ${ESCAPE_LOG}`,
      { LC_ALL: 'C.UTF-8' },
      ['set -g set-clipboard on', 'set -g allow-rename on', 'set -g automatic-rename off'],
    );

    const screen = await tmux.waitFor(
      (s) => s.includes('ESCAPE-LOG-DONE') && /exited 0/.test(s),
      'the whole log, and the run exited',
    );
    const lines = screen.split('\n').map((l) => l.trimEnd());
    // a clear, a cursor move or a reset would have torn the frame: header on top, lines whole
    expect(lines[0]).toMatch(/^nsa-dbg local · lane baseline/);
    for (const clean of CLEAN_LINES) expect(lines).toContain(clean);
    expect(screen).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
    expectNothingLeaked(tmux, screen);
    // our own alternate screen is still on: a leaked ?1049l would have left it
    expect(tmux.display('#{alternate_on}')).toBe('1');

    tmux.key('q');
    await tmux.waitFor((s) => /Quit nsa-dbg\? y\/n/.test(s), 'quit confirm');
    tmux.key('y');
    const after = await tmux.waitFor((s) => s.includes('[app exited 0]'), 'clean exit');
    expectNothingLeaked(tmux, after);
  });
});
