// A dashboard of many ranks is published every other tick (2 s at the default 1 s): a real trainer
// (python3) writing 300 ranks' heartbeat files into its run dir, the engine following them, a
// subscriber counting what it is handed. Beside it the same trainer with 8 ranks is published every
// tick. (A notice going out on the next tick whatever the pace: test/unit/session/publisher.test.ts.)
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { localOpener } from '../../src/cli/open-session.js';
import type { Session } from '../../src/session/session.js';
import { waitUntil } from '../helpers/wait.js';

const TRAINER = `
import json, os, sys, time
ranks = int(sys.argv[1]); d = os.environ['NSA_DBG_OUT_DIR']
files = [open(os.path.join(d, f'heartbeat_rank{r}.jsonl'), 'a', buffering=1) for r in range(ranks)]
for step in range(1, 400):
    if os.path.exists(os.path.join(d, '.HALT')):
        break  # nsa-dbg's stop asks by this file first (as nsa-vibe's trainer reads it)
    for r, f in enumerate(files):
        f.write(json.dumps({'ts': time.time(), 'iso': '', 'pid': os.getpid(), 'rank': r, 'step': step,
                            'msg': 'beat', 'phase': 'step_start'}) + '\\n')
    print(f'step {step:04d} | loss 5.70 | lr 1.00e-04 | toks/s 80', flush=True)
    time.sleep(0.1)
`;

let session: Session | null = null;
afterEach(async () => {
  await session?.quit();
  session = null;
});

async function publishes(ranks: number): Promise<{ ranks: number; ticks: number }> {
  const work = mkdtempSync(join(tmpdir(), 'nsa-pace-'));
  writeFileSync(join(work, 'train.py'), TRAINER);
  const s = localOpener().open({
    lane: 'batched-prefill',
    demo: false,
    command: ['python3', join(work, 'train.py'), String(ranks)],
    runsRoot: join(work, 'runs'),
    publishMs: 100,
  });
  session = s;
  let handed = 0;
  s.subscribe(() => handed++);
  await s.start();
  await waitUntil(() => s.getState().ranks.length === ranks && s.getState().ranks.every((r) => r.step >= 3), {
    timeoutMs: 30_000,
    what: `${ranks} ranks past step 3`,
  });
  // over 20 ticks of the clock: every one is dirty (ages move), so each either publishes or waits
  const before = handed;
  await new Promise((r) => setTimeout(r, 2000));
  const ticks = handed - before;
  return { ranks: s.getState().ranks.length, ticks };
}

describe("the dashboard's pace by the number of ranks", () => {
  it('8 ranks: every tick; 300 ranks: every other tick', async () => {
    const few = await publishes(8);
    await session?.quit();
    session = null;
    const many = await publishes(300);
    expect(few.ranks).toBe(8);
    expect(many.ranks).toBe(300);
    // 2 s of 100 ms ticks: up to 20 publishes at the usual pace, 10 at the slower one. A loaded
    // machine only delays ticks (fewer of both), so the bounds are loose below and tight above
    expect(few.ticks).toBeGreaterThanOrEqual(11);
    expect(many.ticks).toBeLessThanOrEqual(11);
    expect(many.ticks).toBeGreaterThanOrEqual(3);
  }, 90_000);
});
