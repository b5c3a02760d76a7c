/**
 * A trainer whose child outlives it (a `subprocess.Popen` helper that inherited its stdout): the
 * run ends when the trainer has exited, not when the helper lets go of the output. Headless
 * returns with the trainer's verdict, the helper is named in a note, and what it printed while
 * nsa-dbg followed the run is in stdout.log. The helper sleeps far longer than the test may take,
 * so a run that waited for it never returns.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const TRAINER = join(import.meta.dirname, '..', 'fixtures', 'trainers', 'leaves_helper.py');
const work = mkdtempSync(join(tmpdir(), 'nsa-leaves-child-'));
const ready = join(work, 'helper.pid');

afterAll(() => {
  // the helper is this test's: it goes whether or not the run's end took it along
  try {
    process.kill(Number(readFileSync(ready, 'utf8')), 'SIGKILL');
  } catch {}
  rmSync(work, { recursive: true, force: true });
});

mkdirSync(join(work, '.nsa-dbg', 'presets'), { recursive: true });
writeFileSync(join(work, '.nsa-dbg', 'presets', 'helper.yaml'), 'name: helper\nenv: {}\n');

describe('a trainer whose child outlives it', () => {
  it('ends with the trainer: headless passes, the note names the child, its output is in stdout.log', async () => {
    const env = { NSA_DBG_HOME: join(work, 'home'), HELPER_READY: ready };
    const args = ['--lane', 'helper', '--runs-dir', join(work, 'runs'), '--', 'python3', '-u', TRAINER];
    const r = await runCli(['run', '--headless', '--json', ...args], { cwd: work, env, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const live = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(live).toMatchObject({ verdict: 'pass', exitCode: 0, go: true });
    const helperPid = Number(readFileSync(ready, 'utf8'));
    expect(live.notes).toContainEqual(
      expect.stringMatching(
        new RegExp(`^pid ${helperPid} \\(\`python3? -c import os, sys, time.*\`\\) still holds the output$`),
      ),
    );
    const log = readFileSync(join(live.localDir, 'stdout.log'), 'utf8');
    expect(log).toContain('trainer: done\n');
    expect(log).toContain('helper: started\n');
    // the folder says the same offline
    const a = await runCli(['analyze', live.localDir, '--json'], { cwd: work, env });
    expect(JSON.parse(a.stdout).notes).toEqual(live.notes);
  }, 90_000);
});
