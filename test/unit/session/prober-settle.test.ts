/**
 * Once a hang's verdict has all it needs, the silences it holds are not checked for a while (30 s):
 * no new round of hundreds of ranks goes out before the stop (at 512 ranks on 2 cores a round in
 * flight held the stop back by up to 23 s). A later silence of a rank is checked as ever. The rank is a
 * real process, read through /proc; the model and the sampler are the prober's two questions.
 */
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import type { CurrentSilence } from '../../../src/analysis/silences.js';
import type { StackSampler } from '../../../src/runs/stack-sampler.js';
import type { LiveModel } from '../../../src/session/live-model.js';
import { StallProber } from '../../../src/session/stall-prober.js';
import { LocalTarget } from '../../../src/targets/local.js';

const child = spawn('sleep', ['60'], { stdio: 'ignore' });
afterAll(() => child.kill());

function silence(sinceTs: number, rank = 0): CurrentSilence {
  return {
    rank,
    step: 3,
    where: 'in-step',
    silenceS: 10,
    thresholdS: 1,
    cpuBusy: null,
    sinceTs,
    judgement: null,
  };
}

/** a prober over the silences `current()` gives, its stack requests recorded in `asked` */
function proberOver(current: () => CurrentSilence[]): { prober: StallProber; asked: number[] } {
  const model = {
    silentRanks: () => current(),
    silenceOf: (rank: number) => current().find((c) => c.rank === rank),
    trainerNowS: (ms: number) => ms / 1000,
    evidence: { judgeSettings: { spinConfirmS: 10 }, dumpEvents: () => [] },
  } as unknown as LiveModel;
  const asked: number[] = [];
  const sampler = {
    record: async () => undefined,
    request: async (rank: number) => {
      asked.push(rank);
      return {
        kind: 'dump-request',
        ts: 0,
        rank,
        pid: child.pid,
        outcome: 'faulthandler',
        purpose: 'suspect',
      };
    },
  } as unknown as StackSampler;
  const prober = new StallProber({ target: new LocalTarget(), model, sampler, pidOf: () => child.pid });
  return { prober, asked };
}

describe('StallProber.settle', () => {
  it('a settled silence gets no check for a while; a new silence of the rank does', async () => {
    let current = silence(1000);
    const { prober, asked } = proberOver(() => [current]);
    const settle = async () => {
      for (let i = 0; i < 40 && asked.length === 0; i++) {
        prober.tick();
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    await settle();
    expect(asked).toEqual([0]);
    // the first check is done (its next one falls due 1.5 s later): settled, none comes
    prober.settle();
    asked.length = 0;
    const until = Date.now() + 2500;
    while (Date.now() < until) {
      prober.tick();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(asked).toEqual([]);
    // the rank spoke and fell silent again: a new silence, checked
    current = silence(2000);
    await settle();
    expect(asked).toEqual([0]);
  });

  // at a confirmed hang the ranks already known to wait for the culprit are held (run-checks.ts):
  // another round of them wakes hundreds of processes and tells the verdict nothing
  it('hold(ranks): those ranks get no check for a while, the others keep theirs', async () => {
    const current = [silence(1000, 0), silence(1000, 1)];
    const { prober, asked } = proberOver(() => current);
    for (let i = 0; i < 40 && asked.length < 2; i++) {
      prober.tick();
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(asked.sort()).toEqual([0, 1]);
    prober.hold([1]);
    asked.length = 0;
    // each rank's next check falls due 1.5 s after its first: rank 0's comes, rank 1's does not
    const until = Date.now() + 2500;
    while (Date.now() < until) {
      prober.tick();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(asked).toContain(0);
    expect(asked).not.toContain(1);
  });
});
