/**
 * One owner of the evidence: for every bundled lane run on the demo trainer, the headless verdict
 * and `nsa-dbg analyze` of the same run dir agree on verdict, stall and steps reached (and on what
 * was checked and found busy). The lanes that hang take the full confirmation: the same frame for
 * max(2 × threshold, 30 s) while spinning, ≈ 35 s after step 5, and 60 s + 120 s for aux-stats' stall
 * in the first step (its threshold is the first-step allowance), so the runs go three at a time.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const LANE_DIR = join(import.meta.dirname, '..', '..', 'presets');
// every single-process lane (lanes that launch through torchrun run several demo ranks: their own tests)
const LANES = readdirSync(LANE_DIR)
  .filter((f) => f.endsWith('.yaml') && !/^launcher:/m.test(readFileSync(join(LANE_DIR, f), 'utf8')))
  .map((f) => f.replace(/\.yaml$/, ''))
  .sort();
const work = mkdtempSync(join(tmpdir(), 'nsa-dbg-agree-'));
const env = { NSA_DBG_HOME: join(work, 'home') };
type Verdicts = { live: Record<string, unknown>; offline: Record<string, unknown>; code: number | null };
const results = new Map<string, Verdicts>();

async function runLane(lane: string): Promise<Verdicts> {
  // the slow-prefill lane keeps its own pace (40 s + 10 s a step): two steps are enough
  const steps = lane === 'demo-slow-prefill' ? '2' : '8';
  const run = await runCli(
    [
      'run',
      '--demo',
      '--headless',
      '--json',
      '--lane',
      lane,
      '--steps',
      steps,
      '--step-ms',
      '100',
      '--runs-dir',
      join(work, 'runs'),
    ],
    { env, timeoutMs: 300_000 },
  );
  const last = run.stdout.trim().split('\n').pop() ?? '';
  if (!last.startsWith('{'))
    throw new Error(`lane ${lane}: no JSON (exit ${run.code}): ${run.stderr.slice(-500)}`);
  const live = JSON.parse(last);
  const an = await runCli(['analyze', String(live.runDir), '--json'], { env });
  return { live, offline: JSON.parse(an.stdout), code: run.code };
}

beforeAll(async () => {
  const queue = [...LANES];
  const worker = async () => {
    for (let lane = queue.shift(); lane !== undefined; lane = queue.shift())
      results.set(lane, await runLane(lane));
  };
  await Promise.all([worker(), worker(), worker()]);
}, 600_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('headless and analyze agree on every bundled lane', () => {
  it.each(LANES)('%s', (lane) => {
    const r = results.get(lane)!;
    expect(r.offline.verdict).toBe(r.live.verdict);
    expect(r.offline.stall).toEqual(r.live.stall);
    expect(r.offline.stepsReached).toBe(r.live.stepsReached);
    expect(r.offline.suspects).toEqual(r.live.suspects);
    expect(r.code).toBe(r.live.go ? 0 : 1);
  });

  it('the demo lanes show each case: spin is stuck, slow prefill is busy and GO, baseline keeps its hang', () => {
    const spin = results.get('demo-spin')!.live as {
      verdict: string;
      stall: { state: string; step: number };
    };
    expect(spin.verdict).toBe('hang');
    expect(spin.stall).toMatchObject({ state: 'stuck', step: 3 });
    const slow = results.get('demo-slow-prefill')!.live as {
      verdict: string;
      go: boolean;
      suspects: unknown[];
    };
    expect(slow).toMatchObject({ verdict: 'slow', go: true });
    expect(slow.suspects.length).toBeGreaterThan(0);
    const base = results.get('baseline')!.live as { verdict: string; stall: { state: string; step: number } };
    expect(base.verdict).toBe('hang');
    expect(base.stall).toMatchObject({ state: 'stuck', step: 6 });
    expect(results.get('batched-prefill')!.live).toMatchObject({ verdict: 'pass', go: true });
  });
});
