import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { localOpener } from '../../src/cli/open-session.js';
import type { Session } from '../../src/session/session.js';
import type { DashboardState } from '../../src/session/state.js';
import { LocalTarget } from '../../src/targets/local.js';
import { waitUntil } from '../helpers/wait.js';

let session: Session | null = null;
afterEach(async () => {
  await session?.quit();
  session = null;
});

function open(lane: string, steps = 10): Session {
  session = localOpener().open({
    lane,
    steps,
    demo: true,
    stepMs: 120,
    runsRoot: mkdtempSync(join(tmpdir(), 'nsa-sess-')),
    publishMs: 20,
  });
  return session;
}

const state = () => session!.getState();

describe('the demo story through the engine (real node-pty, real demo trainer)', () => {
  it('makes the step-6 silence suspect within threshold + 1 s, checks it on the box, dumps on d, and a lane switch passes step 5', async () => {
    const s = open('baseline');
    await s.start();
    // step 6 has begun: its beat is the last sign of life
    await waitUntil(() => state().ranks[0]?.step === 6 && state().ranks[0]?.phase === 'step_start', {
      timeoutMs: 20_000,
      what: 'step 6 beat',
    });
    const silentSince = Date.now() - (state().ranks[0]!.lastBeatAgeS ?? 0) * 1000;
    const stalled = await waitUntil(() => state().ranks.find((r) => r.stall) ?? null, {
      timeoutMs: 30_000,
      what: 'stall',
    });
    const declaredAfterS = (Date.now() - silentSince) / 1000;
    // silence alone is a suspicion, not a hang: the rank is checked on the box first
    expect(stalled.stall).toMatchObject({ step: 6, where: 'in-step', hang: false });
    expect(declaredAfterS).toBeLessThanOrEqual(stalled.thresholdS! + 1);
    expect(state().verdict).toMatchObject({ verdict: 'suspect' });
    expect(state().verdict?.summary).toMatch(/step 6 \(in-step\)/);
    // the demo spins in Python: the process facts taken on the box say so
    await waitUntil(() => state().ranks[0]?.stall?.cpuBusy === true, { what: 'cpu busy', timeoutMs: 5000 });
    expect(state().ranks[0]?.stall?.hang).toBe(false); // the same frame for 30 s is needed first

    const asked = Date.now();
    expect(await s.requestDump()).toMatch(/asking 1 rank\(s\) for their stacks/);
    // the trainer's own SIGUSR1 dump (the prober's hook samples of the suspect rank may already be
    // in the pane: one can land just before the key, so the first dump seen is not the answer)
    const dump = await waitUntil(() => (state().dump?.kind === 'signal' ? state().dump : null), {
      timeoutMs: 2000,
      what: "the trainer's dump within 2 s",
    });
    expect(Date.now() - asked).toBeLessThan(2000);
    expect(dump.signal).toBe(10);
    expect(dump.mainThread[0]).toMatchObject({ function: '_forward_prefill_sequential' });
    expect(dump.mainThread[0]!.file).toMatch(/nsa\/core\/nsa_attention\.py$/);

    const firstRun = s.currentRun()!;
    await s.switchLane('batched-prefill');
    expect(firstRun.exited).toBe(true);
    expect(await new LocalTarget().isAlive(firstRun.pid!)).toBe(false);
    await waitUntil(() => state().lane === 'batched-prefill', {
      what: 'new lane published',
      timeoutMs: 2000,
    });
    const done = await waitUntil(
      () =>
        // after the exit the verdict is null until the last files are drained and judged
        state().runState === 'exited' && state().verdict && state().verdict?.verdict !== 'running'
          ? (state() as DashboardState)
          : null,
      { timeoutMs: 30_000, what: 'batched run to finish' },
    );
    expect(done.step).toBe(10);
    expect(done.verdict?.verdict).toBe('pass');
    expect(done.loss.length).toBe(10);
    expect(done.gpu.simulated).toBe(true);
  });

  it('quitting a local run stops it by the stop ladder', async () => {
    const s = open('batched-prefill', 500);
    await s.start();
    await waitUntil(() => state().step >= 2, { what: 'step 2', timeoutMs: 15_000 });
    const pid = state().pid!;
    expect(s.quitConsequence()).toMatch(/will be stopped/);
    await s.quit();
    session = null;
    expect(await new LocalTarget().isAlive(pid)).toBe(false);
  });

  it('shows the GPU panel from the simulated nvidia-smi, consistent with the heartbeat memory', async () => {
    const s = open('batched-prefill', 500);
    await s.start();
    const g = await waitUntil(
      // the shim reports memory once the trainer's first heartbeat names its pid
      () => ((state().gpu.gpus[0]?.memUsedMiB ?? 0) > 0 && state().gpu.torchReservedMiB ? state().gpu : null),
      { what: 'gpu sample', timeoutMs: 15_000 },
    );
    expect(g.gpus[0]!.memTotalMiB).toBe(143771);
    expect(g.gpus[0]!.memUsedMiB).toBeGreaterThan(g.torchReservedMiB!);
  });
});
