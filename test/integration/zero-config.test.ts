/**
 * Zero configuration on trainers nsa-dbg has no parser of its own for, run for real under
 * `run --headless`: minGPT's chargpt and nanoGPT unpatched on CPU torch (logging every 10
 * iterations from 0), and a trainer of a format nobody wrote a parser for. Each of what a new user
 * saw is a case here: no lane regex gave nothing; a clean run that logs every k steps was NO-GO; no
 * step time; step labels of steps nobody saw; the lane's steps overriding the command's own count.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { minGptCommand, minGptDir, minGptEnv } from '../helpers/mingpt.js';
import { nanoGptCommand, nanoGptDir } from '../helpers/nanogpt.js';

const dir = minGptDir();
const TRAINER = join(import.meta.dirname, '..', 'fixtures', 'trainers', 'unknown_format.py');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function lane(name: string, yaml: string, where = dir): void {
  mkdirSync(join(where, '.nsa-dbg', 'presets'), { recursive: true });
  writeFileSync(join(where, '.nsa-dbg', 'presets', `${name}.yaml`), `name: ${name}\n${yaml}`);
}
// plain lanes: no stepRegex; a short spin window so a spin is confirmed in seconds
lane('t-min', 'stepsFlag: "--trainer.max_iters="\nstop: { halt: false, sigintWaitS: 3 }\n');
lane('t-min200', 'steps: 60\nstepsFlag: "--trainer.max_iters="\nstop: { halt: false, sigintWaitS: 3 }\n');
lane('t-odd', 'stepsFlag: ""\ndetector: { spinConfirmS: 8 }\nstop: { halt: false, sigintWaitS: 3 }\n');

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON, read field by field
type Json = Record<string, any>;

async function headless(name: string, laneName: string, args: string[], command: string[], cwd = dir) {
  const runs = join(dir, `runs-${name}`);
  const r = await runCli(
    ['run', '--headless', '--json', '--lane', laneName, '--runs-dir', runs, ...args, '--', ...command],
    {
      cwd,
      env: { NSA_DBG_HOME: join(dir, 'home'), ...minGptEnv(dir) },
      timeoutMs: 150_000,
    },
  );
  expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  expect(r.stdout, r.stderr).not.toBe('');
  const live: Json = JSON.parse(r.stdout.trim().split('\n').pop()!);
  const a = await runCli(['analyze', live.localDir, '--json'], { cwd: dir });
  return { code: r.code, live, offline: JSON.parse(a.stdout) as Json, runs };
}

describe('minGPT (unpatched chargpt, CPU): no lane regex', () => {
  it('a clean run is GO: its steps and loss, logged every 10 from 0, its own step time', async () => {
    const nb = join(dir, 'clean.nsa-dbg.json');
    const o = await headless('clean', 't-min', ['--steps', '60', '--notebook', nb], minGptCommand());
    expect(o.code).toBe(0);
    expect(o.live).toMatchObject({ verdict: 'pass', go: true, stepsReached: 50, reasons: [] });
    expect(o.live.stepFormat).toMatchObject({ name: 'mingpt', every: 10, base: 0 });
    expect(o.live.target).toMatchObject({ steps: 60, reached: true });
    expect(o.live.target.how).toMatch(/within one logging interval \(every 10, counting from 0\) of 60/);
    expect(o.live.throughput.medianStepS).toBeGreaterThan(0.005);
    expect(o.live.throughput.p95StepS).toBeGreaterThanOrEqual(o.live.throughput.medianStepS);
    expect(o.live.summary).toMatch(/^pass: 50 steps, median [\d.]+ (ms|s)\/step$/);
    // every logged iteration is a step, live and offline alike
    expect(o.live.digest.series.loss.length).toBe(6);
    for (const k of ['verdict', 'stepsReached', 'stepFormat', 'throughput'])
      expect(o.offline[k], k).toEqual(o.live[k]);
    const script = readFileSync(join(o.live.localDir, 'run.sh'), 'utf8');
    expect(script).toMatch(/ --trainer\.max_iters=60[; ]/);
    // the report: the cell's step lines, its step time in the performance table, and it finished
    const rep = await runCli(['report', nb, '-o', '-'], {
      cwd: dir,
      env: { NSA_DBG_HOME: join(dir, 'home') },
    });
    expect(rep.code).toBe(0);
    expect(rep.stdout).toContain('**step lines** mingpt, every 10 from 0');
    const perf = rep.stdout.slice(rep.stdout.indexOf('## Performance'));
    const row = perf.split('\n').find((l) => l.startsWith('| c1'));
    expect(row, rep.stdout).toBeDefined();
    expect(row).not.toContain('not ranked');
    expect(row).toMatch(/\| [\d.]+ ms \| [\d.]+ \|/);
  });

  it('the command’s own count wins: the lane’s steps only set the acceptance', async () => {
    // lane steps 60; the command asks for 41: nothing is appended after it (the trainer takes the last)
    const o = await headless('own', 't-min200', [], minGptCommand(41));
    const out = readFileSync(join(o.live.localDir, 'stdout.log'), 'utf8');
    expect(out).toContain('overwriting config attribute trainer.max_iters with 41');
    expect(out).not.toContain('trainer.max_iters with 60');
    expect(o.live).toMatchObject({ stepsReached: 40, go: false, reasons: ['reached step 40 of 60'] });
  });

  it('--steps that contradicts the command’s count: one line, exit 2, nothing launched', async () => {
    const runs = join(dir, 'runs-conflict');
    const r = await runCli(
      [
        'run',
        '--headless',
        '--lane',
        't-min',
        '--runs-dir',
        runs,
        '--steps',
        '50',
        '--',
        ...minGptCommand(41),
      ],
      {
        cwd: dir,
        env: { NSA_DBG_HOME: join(dir, 'home') },
      },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "nsa-dbg: --steps 50 contradicts the command's own --trainer.max_iters=41: give one of them\n",
    );
    expect(existsSync(runs) ? readdirSync(runs) : []).toEqual([]);
  });
});

describe('nanoGPT unpatched, log_interval 10 (it counts from 0 and runs max_iters + 1 iterations)', () => {
  it('a clean run is GO with its own step time', async () => {
    const nano = nanoGptDir();
    try {
      lane('t-nano10', 'stepsFlag: "--max_iters="\nstop: { halt: false, sigintWaitS: 3 }\n', nano);
      const o = await headless(
        'nano10',
        't-nano10',
        ['--steps', '25'],
        [...nanoGptCommand(join(nano, 'out')), '--log_interval=10'],
        nano,
      );
      expect(o.code).toBe(0);
      expect(o.live).toMatchObject({ verdict: 'pass', go: true, stepsReached: 20 });
      expect(o.live.stepFormat).toMatchObject({ name: 'nanogpt', every: 10, base: 0 });
      expect(o.live.throughput.medianStepS).toBeGreaterThan(0.005);
    } finally {
      rmSync(nano, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('a trainer of a format nobody wrote a parser for', () => {
  const run = (name: string, args: string[], env: Record<string, string> = {}) =>
    headless(
      name,
      't-odd',
      ['--steps', '60'],
      [
        '/usr/bin/env',
        ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
        '/usr/bin/python3',
        '-u',
        TRAINER,
        ...args,
      ],
    );

  it('a clean run is GO: steps, loss and step time learned from its lines, and it says so', async () => {
    const o = await run('odd-clean', ['60']);
    expect(o.code).toBe(0);
    expect(o.live).toMatchObject({ verdict: 'pass', go: true, stepsReached: 50 });
    expect(o.live.stepFormat).toMatchObject({
      name: 'inferred',
      every: 10,
      base: 0,
      inferred: { template: 'epoch # | batch # | train_loss # | # ms/it' },
    });
    expect(o.live.digest.series.loss.map((p: number[]) => p[0])).toEqual([0, 10, 20, 30, 40, 50]);
    expect(o.live.digest.series.loss[0][1]).toBeCloseTo(3.465, 3);
    // its own `ms/it`: ~20 ms (STEP_S 0.02)
    expect(o.live.throughput.medianStepS).toBeGreaterThan(0.015);
    expect(o.live.throughput.medianStepS).toBeLessThan(1);
    expect(o.live.notes.join(' ')).toContain('step lines learned from the output: "epoch # | batch # |');
    for (const k of ['verdict', 'stepsReached', 'stepFormat', 'throughput'])
      expect(o.offline[k], k).toEqual(o.live[k]);
  });

  it('a crash inside iteration 20 is "after step 10 (logged every 10)", never step 11', async () => {
    const o = await run('crash', ['60', 'crash', '20']);
    expect(o.live).toMatchObject({
      verdict: 'crash',
      go: false,
      crash: { afterStep: 10, exception: 'ValueError' },
    });
    expect(o.live.summary).toMatch(
      /^crash after step 10 \(logged every 10\), rank 0: ValueError: bad batch at iteration 20/,
    );
    expect(o.live.summary).not.toContain('step 11');
  });

  it('a spin inside iteration 40 is a hang "after step 30 (logged every 10)"', async () => {
    const o = await run('spin', ['100000', 'spin', '40'], { STEP_S: '0.05' });
    expect(o.live).toMatchObject({ verdict: 'hang', go: false, stall: { afterStep: 30, state: 'stuck' } });
    expect(o.live.summary).toMatch(/^hang after step 30 \(logged every 10\) \(in-step\), rank 0/);
    expect(o.live.summary).not.toContain('step 31');
  }, 120_000);

  it('lines with nothing step-like: the note gives the shapes and a stepRegex, which then reads the steps', async () => {
    const o = await run('plain', ['60', 'plain']);
    expect(o.live).toMatchObject({
      verdict: 'pass',
      go: false,
      stepsReached: 0,
      reasons: ['reached step 0 of 60'],
    });
    const note = o.live.notes.find((n: string) => n.startsWith('no line was recognised as a training step'));
    expect(note).toContain('"[#:#:#] # | # | #" ×6');
    const regex = /a lane stepRegex that would read them: (.*)$/.exec(note)![1]!;
    lane('t-fixed', `stepsFlag: ""\nstepRegex: ${JSON.stringify(regex)}\n`);
    const fixed = await headless(
      'fixed',
      't-fixed',
      ['--steps', '60'],
      ['/usr/bin/python3', '-u', TRAINER, '60', 'plain'],
    );
    expect(fixed.live).toMatchObject({ verdict: 'pass', go: true, stepsReached: 50 });
    expect(fixed.live.stepFormat).toMatchObject({ name: 'preset-regex', every: 10, base: 0 });
  });
});
