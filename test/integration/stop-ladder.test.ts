/**
 * Stopping with feedback: while the stop ladder runs the status line says what was sent and when
 * the next step comes, and a second `q` (killNow) does not wait for it. Real node-pty, the real demo
 * trainer spinning in a step that never polls .HALT.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { localOpener } from '../../src/cli/open-session.js';
import type { Session } from '../../src/session/session.js';
import { stopText } from '../../src/session/stop-ladder.js';
import { LocalTarget } from '../../src/targets/local.js';
import { waitUntil } from '../helpers/wait.js';

let session: Session | null = null;
afterEach(async () => {
  await session?.dispose();
  session = null;
});

describe('the stop ladder, shown as it goes', () => {
  it('says the step and the countdown; kill-now ends the run at once', async () => {
    const s = localOpener().open({
      lane: 'baseline',
      steps: 20,
      demo: true,
      stepMs: 100,
      runsRoot: mkdtempSync(join(tmpdir(), 'nsa-stop-')),
      publishMs: 20,
    });
    session = s;
    await s.start();
    await waitUntil(() => (s.getState().ranks[0]?.step === 6 ? true : null), {
      what: 'step 6',
      timeoutMs: 20_000,
    });
    const pid = s.getState().pid!;
    const quitting = s.quit(); // not confirmed stuck yet: the polite .HALT first, 15 s before SIGINT
    const notice = await waitUntil(
      () =>
        /wrote \.HALT \d+ s ago; SIGINT in \d+ s/.test(s.getState().notice ?? '')
          ? s.getState().notice
          : null,
      { what: 'ladder notice', timeoutMs: 5000 },
    );
    expect(notice).toMatch(/q again: kill now/);
    const asked = Date.now();
    await s.killNow();
    await quitting;
    session = null;
    expect(Date.now() - asked).toBeLessThan(5000); // not the 15 s + 10 s of the ladder
    expect(await new LocalTarget().isAlive(pid)).toBe(false);
  });
});

describe('stopText', () => {
  it('counts down to the next step, and says when nothing is left to wait for', () => {
    expect(stopText({ step: 'sigint', atMs: 0, nextInS: 10 }, 3000)).toBe(
      'stopping: SIGINT sent 3 s ago; SIGKILL in 7 s (q again: kill now)',
    );
    expect(stopText({ step: 'halt', atMs: 0, nextInS: 15 }, 0)).toBe(
      'stopping: wrote .HALT 0 s ago; SIGINT in 15 s (q again: kill now)',
    );
    expect(stopText({ step: 'sigkill', atMs: 0, nextInS: null }, 2000)).toBe(
      'stopping: SIGKILL sent 2 s ago',
    );
  });
});
