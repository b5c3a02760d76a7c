/**
 * Straggler ranking for real: eight ranks under a real torchrun (Debian's torch 1.13, gloo on CPU),
 * synchronous steps of ~0.5 s ending in an all_reduce (test/fixtures/trainers/straggler.py), driven
 * by `nsa-dbg run --headless --json`. One rank given 10 % more work per step must be named the
 * straggler within 20 steps (the run is 20 steps long), a run with none must name nobody, and no
 * rank is ever killed by a sample (every run completes every step, every rank exits 0). `nsa-dbg analyze` of the
 * folder ranks the same samples the same way.
 *
 * The issue asks for ≥ 9 of 10 runs each way. On a two-core CI box that is ~10 min, so CI runs
 * NSA_DBG_STRAGGLER_RUNS (default 2) of each, a straggler run and a plain one side by side, and asks
 * for ≥ 90 % of them (rounded down) right and no wrong rank ever named; NSA_DBG_STRAGGLER_RUNS=10
 * is the full check (docs/stragglers.md says what it gave).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { freePort } from '../helpers/ports.js';

const TRAINER = join(import.meta.dirname, '..', 'fixtures', 'trainers', 'straggler.py');
const RUNS = Number(process.env.NSA_DBG_STRAGGLER_RUNS ?? 2);
const STEPS = 20;
const work = mkdtempSync(join(tmpdir(), 'nsa-dbg-straggler-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const LANE = `name: st
description: straggler
stepsFlag: ""
detector: { floorS: 5, spinConfirmS: 4, maxStepS: 60 }
stop: { halt: false, sigintWaitS: 5 }
acceptance: { finiteLoss: true, noStall: true }
`;

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON, read field by field
type Any = any;

interface Outcome {
  slow: number;
  named: number[];
  live: Any;
  offline: Any;
  code: number | null;
  bySignal: Array<{ armed: boolean; asked: number; sampled: number }>;
}

async function run(name: string, slow: number): Promise<Outcome> {
  const cwd = join(work, name);
  mkdirSync(join(cwd, '.nsa-dbg', 'presets'), { recursive: true });
  writeFileSync(join(cwd, '.nsa-dbg', 'presets', 'st.yaml'), LANE);
  const env = { NSA_DBG_HOME: join(cwd, 'home') };
  const cmd = [
    '/usr/bin/python3',
    '-m',
    'torch.distributed.run',
    '--nproc_per_node',
    '8',
    '--master_port',
    String(await freePort()),
    '--redirects',
    '2',
    '--tee',
    '2',
    TRAINER,
    String(slow),
    String(STEPS),
  ];
  const args = ['run', '--headless', '--json', '--lane', 'st', '--runs-dir', join(cwd, 'runs'), '--', ...cmd];
  const r = await runCli(args, { cwd, env, timeoutMs: 170_000 });
  expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  const live = JSON.parse(r.stdout.trim().split('\n').pop()!);
  const an = await runCli(['analyze', live.runDir, '--json'], { cwd, env });
  const offline = JSON.parse(an.stdout);
  const named = (live.stragglers as Any[]).filter((s) => s.named).map((s) => s.rank);
  // per rank: the hook armed its sample signal, and how many sample requests its watcher answered
  const logs = readdirSync(live.runDir).filter((f) => f.startsWith('nsa-dbg-stacks_'));
  const bySignal = logs.map((f) => {
    const text = readFileSync(join(live.runDir, f), 'utf8');
    return {
      armed: /^# samples 23$/m.test(text),
      asked: (text.match(/^# request .* sample$/gm) ?? []).length,
      sampled: (text.match(/^# sampled /gm) ?? []).length,
    };
  });
  return { slow, named, live, offline, code: r.code, bySignal };
}

describe('straggler ranking under a real torchrun (8 gloo ranks, CPU)', () => {
  it(
    `names a rank doing 10 % more work within ${STEPS} steps, and nobody in a run without one`,
    async () => {
      const outcomes: Outcome[] = [];
      for (let i = 0; i < RUNS; i++) {
        // one straggler run and one plain run at a time, side by side (the work is mostly sleep)
        const slow = [5, 2, 7, 1, 6, 3, 0, 4][i % 8]!;
        outcomes.push(...(await Promise.all([run(`slow-${i}`, slow), run(`none-${i}`, -1)])));
      }
      const lines = outcomes.map(
        (o) =>
          `slow ${o.slow}: named [${o.named}] ` +
          (o.live.stragglers as Any[]).map((s) => `${s.rank}:${s.waitShare}/${s.samples}`).join(' ') +
          ` conf ${Math.max(...(o.live.stragglers as Any[]).map((s) => s.confidence))}`,
      );
      console.log(lines.join('\n'));
      for (const o of outcomes) {
        // no rank was killed by a sample: the run passed, every rank exited 0, all steps done
        expect(o.code, lines.join('\n')).toBe(0);
        // slow: a rank went silent past its threshold on the loaded box and was checked busy (a GO)
        expect(['pass', 'slow']).toContain(o.live.verdict);
        expect(o.live.stepsReached).toBe(STEPS);
        expect(o.live.lastWords).toEqual([]);
        // every rank sampled, the JSON as the issue names it
        expect(o.live.stragglers.map((s: Any) => s.rank)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
        for (const s of o.live.stragglers)
          expect(Object.keys(s).sort()).toEqual(
            ['confidence', 'named', 'node', 'rank', 'samples', 'score', 'waitShare'].sort(),
          );
        // samples went by the sample signal (SIGURG, the watcher's one write), not the stack dump:
        // all but the few sent before nsa-dbg read the hook's `# samples 23`
        expect(o.bySignal).toHaveLength(8);
        for (const b of o.bySignal) {
          expect(b.armed).toBe(true);
          expect(b.sampled).toBeGreaterThanOrEqual(0.8 * b.asked);
        }
        // offline reads the same folder the same way
        expect(o.offline.stragglers).toEqual(o.live.stragglers);
      }
      const slowRuns = outcomes.filter((o) => o.slow >= 0);
      const plainRuns = outcomes.filter((o) => o.slow < 0);
      const right = slowRuns.filter((o) => o.named.length === 1 && o.named[0] === o.slow).length;
      const wrong = slowRuns.filter((o) => o.named.some((r) => r !== o.slow)).length;
      const falseNamed = plainRuns.filter((o) => o.named.length > 0).length;
      console.log(
        `straggler named in ${right}/${RUNS}; a wrong rank named in ${wrong}; nobody named in ${RUNS - falseNamed}/${RUNS} plain runs`,
      );
      expect(wrong).toBe(0);
      expect(right).toBeGreaterThanOrEqual(Math.floor(0.9 * RUNS));
      expect(RUNS - falseNamed).toBeGreaterThanOrEqual(Math.floor(0.9 * RUNS));
    },
    60_000 + RUNS * 180_000,
  );
});
