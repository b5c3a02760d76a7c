/**
 * Stuck or slow, with real processes: a small real trainer goes quiet at step 4 in one of five ways
 * and `nsa-dbg run --headless` must tell a hang (stopped at once, with its state and evidence) from
 * a slow step (left alone, GO), and `nsa-dbg analyze` of the same run dir must say the same.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const TRAINER = join(import.meta.dirname, '..', 'fixtures', 'trainers', 'stall_modes.py');
const work = mkdtempSync(join(tmpdir(), 'nsa-dbg-stuck-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// quick settings so each case takes seconds: threshold floor 2 s, spinning confirmed after
// max(2 × 2 s, 4 s), a CPU-busy native call a hang past 8 s, short stop ladder
const lane = (spinConfirmS: number) => `name: t-quiet
description: stuck-or-slow test lane
detector: { floorS: 2, spinConfirmS: ${spinConfirmS}, maxStepS: 8 }
stop: { haltWaitS: 2, sigintWaitS: 2 }
acceptance: { finiteLoss: true, noStall: true }
`;

async function runMode(mode: string, spinConfirmS = 4) {
  const cwd = join(work, mode);
  mkdirSync(join(cwd, '.nsa-dbg', 'presets'), { recursive: true });
  writeFileSync(join(cwd, '.nsa-dbg', 'presets', 't-quiet.yaml'), lane(spinConfirmS));
  const env = { NSA_DBG_HOME: join(cwd, 'home') };
  const started = Date.now();
  const run = await runCli(
    [
      'run',
      '--headless',
      '--json',
      '--lane',
      't-quiet',
      '--runs-dir',
      join(cwd, 'runs'),
      '--',
      'python3',
      '-u',
      TRAINER,
      mode,
    ],
    { cwd, env, timeoutMs: 90_000 },
  );
  const seconds = (Date.now() - started) / 1000;
  expect(run.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace
  const live = JSON.parse(run.stdout.trim().split('\n').pop()!);
  const an = await runCli(['analyze', live.runDir, '--json'], { cwd, env });
  const offline = JSON.parse(an.stdout);
  // one owner of the evidence: the same verdict, stall and steps, live and offline
  expect(offline.verdict).toBe(live.verdict);
  expect(offline.stall).toEqual(live.stall);
  expect(offline.stepsReached).toBe(live.stepsReached);
  expect(offline.suspects).toEqual(live.suspects);
  expect(live.detector).toMatchObject({ floorS: 2, spinConfirmS, maxStepS: 8 });
  return { code: run.code, live, seconds };
}

describe('stuck or slow, real processes', () => {
  it('sleeping on an event: stuck within threshold + ~5 s, with identical samples', async () => {
    const { code, live } = await runMode('sleep');
    expect(code).toBe(1);
    expect(live.verdict).toBe('hang');
    expect(live.stall).toMatchObject({ step: 4, where: 'in-step', state: 'stuck', cpuBusy: false });
    expect(live.stall.evidence).toMatchObject({ framesMoved: false });
    expect(['S', 'D']).toContain(live.stall.evidence.procState);
    expect(live.stall.evidence.samples).toBeGreaterThanOrEqual(3);
    expect(live.stall.frame.function).toBe('wait_for_event');
    expect(live.stall.silenceS).toBeLessThan(live.stall.thresholdS + 9);
    // the hook's dump at once, then (the main thread ran Python: a wait Python interrupts) the
    // trainer's own SIGUSR1 dump: the trainer's handler is still used where it answers
    const outcomes = live.dumpRequests.map((r: { outcome: string }) => r.outcome);
    expect(outcomes).toContain('written');
    expect(outcomes.every((o: string) => o === 'written' || o === 'faulthandler')).toBe(true);
  });

  it('spinning on one line: stuck once the samples agree for the confirm window', async () => {
    const { live } = await runMode('spin');
    expect(live.verdict).toBe('hang');
    expect(live.stall).toMatchObject({ step: 4, state: 'stuck', cpuBusy: true });
    expect(live.stall.evidence.procState).toBe('R');
    expect(live.stall.frame.function).toBe('spin');
    expect(live.hotFrames[0]).toMatchObject({ function: 'spin' });
  });

  it('SIGSTOPped: stuck, state T', async () => {
    const { live } = await runMode('stop');
    expect(live.verdict).toBe('hang');
    expect(live.stall).toMatchObject({ step: 4, state: 'stuck' });
    expect(live.stall.evidence.procState).toBe('T');
  });

  it('SIGSTOPped for 5 s, resumed inside a 12 s confirm window: no hang, the run goes on to GO', async () => {
    const { code, live } = await runMode('stopcont', 12);
    expect(code).toBe(0);
    expect(live.go).toBe(true);
    expect(live.stall).toBeNull();
    expect(live.stepsReached).toBe(6);
  });

  it('blocked in native code: busy while the CPU burns, blocked-native past maxStepS', async () => {
    const { live } = await runMode('native');
    expect(live.verdict).toBe('hang');
    expect(live.stall).toMatchObject({ step: 4, state: 'blocked-native', cpuBusy: true });
    // the judge's rule is silence > maxStepS (8 s); the report rounds the silence to 0.01 s, so a
    // hang judged at 8.003 s reads 8 (CI saw exactly that)
    expect(live.stall.silenceS).toBeGreaterThanOrEqual(8);
    // the trainer's SIGUSR1 handler never ran; nsa-dbg's stack hook gave the stack at once, from C
    const outcomes = live.dumpRequests.map((r: { outcome: string }) => r.outcome);
    expect(outcomes.every((o: string) => o === 'faulthandler')).toBe(true);
    expect(live.dumps.length).toBeGreaterThan(0);
    expect(live.dumps.every((d: { kind: string }) => d.kind === 'faulthandler')).toBe(true);
    expect(live.dumps[0].mainThreadTop.function).toBe('native_call');
    expect(live.stall.why).toMatch(/native code, in native_call/);
  });

  it('slow but alive: checked, found busy, left alone, GO with the reason', async () => {
    const { code, live } = await runMode('slow');
    expect(code).toBe(0);
    expect(live.go).toBe(true);
    expect(live.verdict).toBe('slow');
    expect(live.stall).toBeNull();
    expect(live.exitCode).toBe(0);
    expect(live.stepsReached).toBe(6);
    expect(live.suspects).toHaveLength(1);
    expect(live.suspects[0]).toMatchObject({ rank: 0, step: 4, state: 'busy' });
    expect(live.suspects[0].evidence.framesMoved).toBe(true);
    expect(live.reasons.join(' ')).toMatch(/slow/);
    expect(live.hotFrames.map((h: { function: string }) => h.function)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^stage_/)]),
    );
  });
});
