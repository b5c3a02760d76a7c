/** RunWatcher on the local target: every byte of a followed file delivered once, also at the end. */

import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunWatcher } from '../../../src/runs/run-watcher.js';
import { LocalTarget } from '../../../src/targets/local.js';
import { waitUntil } from '../../helpers/wait.js';

describe('RunWatcher', () => {
  it('stopped twice (a run that ended, then its session closed): nothing is delivered again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-watch-'));
    writeFileSync(join(dir, 'stdout.log'), 'step 0001 | loss 1.0\n');
    let got = '';
    const w = new RunWatcher(
      new LocalTarget(),
      dir,
      (name, c) => {
        if (name === 'stdout.log') got += c.toString();
      },
      { listEveryMs: 20, pollMs: 10 },
    );
    w.start();
    await waitUntil(() => got.length > 0, { timeoutMs: 5000, what: 'the first line' });
    appendFileSync(join(dir, 'stdout.log'), 'step 0002 | loss 0.9\n');
    // both at once, as the end of a run and the close of its session can, then once more
    await Promise.all([w.stop(), w.stop()]);
    await w.stop();
    expect(got).toBe('step 0001 | loss 1.0\nstep 0002 | loss 0.9\n');
  });
});
