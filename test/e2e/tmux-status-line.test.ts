/**
 * What a key or the engine says has a status line of its own at the bottom, whole (wrapped at
 * spaces when longer than the terminal), never cut off by the verdict banner on the header's
 * second line: exactly while a run is hung is when the user presses keys. Under a long HANG banner
 * (demo-many-flags spins in step 6 and is confirmed stuck in seconds), in the plain dashboard and
 * in a notebook's finished cell, at 120 and 80 columns.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TmuxSession } from '../helpers/tmux.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'nsa-dbg');
const ENDED_DUMP =
  'the run has ended: no process left to dump (the newest dump is in the pane, all of them in the evidence folder)';

let tmux: TmuxSession | null = null;
afterEach(() => {
  tmux?.kill();
  tmux = null;
});

/** the screen's bottom rows as one text: a wrapped notice reads as it was written */
const bottom = (screen: string, rows = 4) =>
  screen
    .trimEnd()
    .split('\n')
    .slice(-rows)
    .map((l) => l.trimEnd())
    .join(' ');

/** the banner wider than the screen: the header's second line is cut (with …) under it */
const HANG_LINE = /^.*HANG: at step 6 \(in-step\), rank 0 — stuck.*…$/m;

describe.each([
  [120, 40],
  [80, 24],
])('the status line under a long HANG banner at %i×%i', (cols, rows) => {
  it('the plain dashboard: an unbound key says so, whole, and the banner stays', {
    timeout: 120_000,
  }, async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    const t = new TmuxSession(`status-${cols}`, cols, rows);
    tmux = t;
    const runs = mkdtempSync(join(tmpdir(), 'nsa-e2e-'));
    t.start(`node ${BIN} demo --lane demo-many-flags --step-ms 150 --steps 12 --runs-dir ${runs}`);
    await t.waitFor((s) => HANG_LINE.test(s), 'the HANG banner', 60_000);
    t.key('X');
    const screen = await t.waitFor(
      (s) => bottom(s).includes('X is not a key here: ? lists the keys'),
      'the notice on the status line',
    );
    expect(screen).toMatch(HANG_LINE);
  });

  it("a notebook's finished cell: d and s say the run has ended, whole", {
    timeout: 120_000,
  }, async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'nsa-e2e-nb-'));
    const t = new TmuxSession(`status-nb-${cols}`, cols, rows);
    tmux = t;
    t.start(`cd ${dir} && node ${BIN} --notebook ab.json --demo --steps 12 --step-ms 150`, {
      NSA_DBG_HOME: join(dir, 'home'),
    });
    await t.waitFor((s) => s.includes('no cells yet'), 'empty notebook');
    t.key('n');
    await t.waitFor((s) => s.includes('new cell from lane'), 'lane picker');
    t.type('many');
    await t.waitFor((s) => /filter: many_/.test(s), 'filtered picker');
    t.key('Enter');
    await t.waitFor((s) => /c1 demo-many-flags: NO-GO \(hang\)/.test(s), 'c1 stopped as hung', 90_000);
    t.key('Enter');
    await t.waitFor((s) => HANG_LINE.test(s) && /exited/.test(s), "c1's dashboard under its banner");
    t.key('d');
    const dumped = await t.waitFor((s) => bottom(s).includes(ENDED_DUMP), 'what d says, whole');
    expect(dumped).toMatch(HANG_LINE);
    t.key('s');
    await t.waitFor(
      (s) => bottom(s).endsWith('the run has ended: no process left to sample'),
      'what s says, in place of the last notice',
    );
  });
});
