/**
 * A stall that recovered stays visible: the demo trainer is stopped for real (SIGSTOP), the
 * dashboard calls it a HANG once the checks find it in state T long enough, then it is continued
 * (SIGCONT) and steps again; the banner keeps "recovered after N s stalled at step S (stopped,
 * state T)" instead of going back to "no stall seen".
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TmuxSession } from '../helpers/tmux.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'nsa-dbg');
const LANE = join(import.meta.dirname, '..', 'fixtures', 'lanes', 'stop-cont.yaml');
let tmux: TmuxSession | null = null;
let stopped: number | null = null;
afterEach(() => {
  // never leave a stopped trainer behind, whatever failed
  if (stopped !== null) {
    try {
      process.kill(stopped, 'SIGCONT');
    } catch {}
  }
  stopped = null;
  tmux?.kill();
  tmux = null;
});

describe('a stall that recovered, in real tmux', () => {
  it('SIGSTOP: HANG on screen; SIGCONT: the banner says it recovered, after how long, where and why', async () => {
    expect(TmuxSession.available(), 'tmux is required: apt-get install -y tmux').toBe(true);
    const work = mkdtempSync(join(tmpdir(), 'nsa-e2e-stopcont-'));
    mkdirSync(join(work, '.nsa-dbg', 'presets'), { recursive: true });
    copyFileSync(LANE, join(work, '.nsa-dbg', 'presets', 'stop-cont.yaml'));
    const runs = join(work, 'runs');
    tmux = new TmuxSession('stopcont', 160, 40);
    tmux.start(`cd ${work} && node ${BIN} demo --lane stop-cont --step-ms 200 --runs-dir ${runs}`);

    await tmux.waitFor((s) => /RUNNING: no stall seen, step \d+/.test(s), 'a running demo', 60_000);
    // step 3 or later ("step 0003 |"): the zeros are the number's padding, never part of it (the
    // old pattern took "step 0001" for step 01; stopped at step 2, the rank still had the first
    // steps' allowance, and the hang took longer than the wait below)
    await tmux.waitFor((s) => /\bstep 0*(?:[3-9]|[1-9]\d+) \|/.test(s), 'a few steps done', 30_000);
    const runDir = join(runs, readdirSync(runs)[0]!);
    const pid = Number(readFileSync(join(runDir, 'pid'), 'utf8'));
    process.kill(pid, 'SIGSTOP');
    stopped = pid;
    // the banner drops the verdict's own word: `HANG: at step 8 (in-step), rank 0 — stuck: …`
    const hang = await tmux.waitFor((s) => /HANG: at step \d+/.test(s), 'HANG banner', 120_000);
    expect(hang).toMatch(/stopped \(state T\)/);
    const step = Number(/HANG: at step (\d+)/.exec(hang)![1]);

    process.kill(pid, 'SIGCONT');
    stopped = null;
    const recovered = await tmux.waitFor(
      (s) => /RUNNING: .*recovered after \d+ s stalled at step \d+ \(stopped, state T\)/.test(s),
      'the recovered stall in the banner',
      30_000,
    );
    expect(recovered).toContain(`stalled at step ${step} (stopped, state T)`);
    expect(recovered).not.toMatch(/no stall seen/);
    const [, seconds] = /recovered after (\d+) s/.exec(recovered)!;
    // stopped until the checks had seen state T for 10 s (twice the 5 s threshold), after 5 s of silence
    expect(Number(seconds)).toBeGreaterThanOrEqual(15);

    tmux.key('q');
    await tmux.waitFor((s) => /quit/i.test(s) && /\by\/n\b|\[y\]/i.test(s), 'quit confirm');
    tmux.key('y');
    await tmux.waitFor((s) => s.includes('[app exited 0]'), 'clean exit', 30_000);
  }, 300_000);
});
