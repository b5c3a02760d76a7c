/** RunWatcher on the local target: every byte of a followed file delivered once, also at the end. */

import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunWatcher } from '../../../src/runs/run-watcher.js';
import { LocalTarget } from '../../../src/targets/local.js';
import type { TailHandle, TailOptions } from '../../../src/targets/target.js';
import { waitUntil } from '../../helpers/wait.js';

/** a watcher over the real local tail that records the pace it asked each file to be looked at */
function pacedWatcher(dir: string): { pace: Map<string, number | undefined>; w: RunWatcher } {
  const pace = new Map<string, number | undefined>();
  class Recording extends LocalTarget {
    override tail(path: string, onChunk: (c: Buffer) => void, opts: TailOptions = {}): TailHandle {
      pace.set(path.slice(dir.length + 1), opts.pollMs);
      return super.tail(path, onChunk, opts);
    }
  }
  return { pace, w: new RunWatcher(new Recording(), dir, () => {}, { listEveryMs: 20, pollMs: 100 }) };
}

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

  it('looks at heartbeat files every 500 ms, the arrival-timed output and table at the given pace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-watch-'));
    for (const f of [
      'stdout.log',
      'training.csv',
      'heartbeat_rank0.jsonl',
      'heartbeat_rank63.jsonl',
      'heartbeat.jsonl',
    ])
      writeFileSync(join(dir, f), '');
    const { pace, w } = pacedWatcher(dir);
    await w.scan();
    await w.stop();
    expect(Object.fromEntries(pace)).toEqual({
      'stdout.log': 100,
      'training.csv': 100,
      'heartbeat_rank0.jsonl': 500,
      'heartbeat_rank63.jsonl': 500,
      'heartbeat.jsonl': 500,
    });
  });

  it('past 64 heartbeat files (a many-rank run), looks at each once a second; the output as before', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-watch-'));
    writeFileSync(join(dir, 'stdout.log'), '');
    for (let r = 0; r < 65; r++) writeFileSync(join(dir, `heartbeat_rank${r}.jsonl`), '');
    const { pace, w } = pacedWatcher(dir);
    await w.scan();
    // a rank that starts late joins at the same pace
    writeFileSync(join(dir, 'heartbeat_rank65.jsonl'), '');
    await w.scan();
    await w.stop();
    expect(pace.get('stdout.log')).toBe(100);
    expect(pace.size).toBe(67);
    for (let r = 0; r <= 65; r++) expect(pace.get(`heartbeat_rank${r}.jsonl`)).toBe(1000);
  });
});
