/**
 * The dashboard of a trainer whose child outlives it (a `subprocess.Popen` helper holding its
 * stdout): once the trainer has exited the run is over on screen (its verdict, not `running` and a
 * growing silence), and the status line names the helper that still holds the output.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TmuxSession } from '../helpers/tmux.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'nsa-dbg');
const TRAINER = join(import.meta.dirname, '..', 'fixtures', 'trainers', 'leaves_helper.py');
let tmux: TmuxSession | null = null;
let ready: string | null = null;
afterEach(() => {
  // the helper is this test's: it goes whether or not the run's end took it along
  try {
    if (ready) process.kill(Number(readFileSync(ready, 'utf8')), 'SIGKILL');
  } catch {}
  ready = null;
  tmux?.kill();
  tmux = null;
});

describe('a trainer whose child outlives it, in real tmux', () => {
  it('the run ends with the trainer: PASS on screen and the helper named', async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    const work = mkdtempSync(join(tmpdir(), 'nsa-e2e-child-'));
    mkdirSync(join(work, '.nsa-dbg', 'presets'), { recursive: true });
    writeFileSync(join(work, '.nsa-dbg', 'presets', 'helper.yaml'), 'name: helper\nenv: {}\n');
    copyFileSync(TRAINER, join(work, 'train.py'));
    ready = join(work, 'helper.pid');
    tmux = new TmuxSession('child', 160, 40);
    tmux.start(
      `cd ${work} && node ${BIN} run --lane helper --runs-dir ${join(work, 'runs')} -- python3 -u train.py`,
      { HELPER_READY: ready },
    );
    const ended = await tmux.waitFor((s) => /PASS:/.test(s), 'the verdict once the trainer exited', 60_000);
    const helper = Number(readFileSync(ready, 'utf8'));
    expect(ended).toMatch(new RegExp(`pid ${helper} \\(\`python3? -c import os, sys, time`));
    expect(ended).toContain('still holds the output');
    expect(ended).not.toMatch(/SUSPECT|· running ·/);
    tmux.key('q');
    await tmux.waitFor((s) => /quit/i.test(s) && /\by\/n\b|\[y\]/i.test(s), 'quit confirm');
    tmux.key('y');
    await tmux.waitFor((s) => s.includes('[app exited 0]'), 'clean exit', 30_000);
  }, 120_000);
});
