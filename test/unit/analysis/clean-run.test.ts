/**
 * A clean run is a clean run: a trainer that counts from 0 and logs every k steps never prints the
 * last step of its target, yet a run that exits 0 with its last step line within one logging
 * interval of the target got there, and the verdict says how it knows. Judged from real folders (a
 * stdout.log and an exit_code, as the launcher leaves them), through the one reader.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { judge } from '../../../src/analysis/acceptance.js';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'zero-config');
const ACC = { finiteLoss: true, noStall: true };

async function folder(stdout: string, exit: number | null) {
  const dir = mkdtempSync(join(tmpdir(), 'nsa-clean-'));
  writeFileSync(join(dir, 'stdout.log'), stdout);
  if (exit !== null) writeFileSync(join(dir, 'exit_code'), `${exit}\n`);
  return analyzeDir(dir);
}
const mingpt = readFileSync(join(FIX, 'mingpt-chargpt-cpu.log'), 'utf8');

describe('the step target of a trainer that logs every k steps from 0', () => {
  it('minGPT, 200 iterations, last line `iter 190`, exit 0: GO, and how it is known', async () => {
    const r = await folder(mingpt, 0);
    expect(r.stepFormat).toMatchObject({ name: 'mingpt', every: 10, base: 0 });
    expect(r.verdict).toBe('pass');
    const out = judge(r, ACC, 200);
    expect(out).toMatchObject({ go: true, reasons: [] });
    expect(out.target).toEqual({
      steps: 200,
      reached: true,
      how: 'exit 0 with the last step logged (190) within one logging interval (every 10, counting from 0) of 200',
    });
    // its own iter_dt is the step time (a folder without arrival times has no other)
    expect(r.throughput?.medianStepS).toBeGreaterThan(0.05);
    expect(r.throughput?.p95StepS).toBeGreaterThanOrEqual(r.throughput!.medianStepS!);
    expect(r.summary).toMatch(/^pass: 190 steps, median \d+(\.\d+)? ms\/step$/);
  });

  it('more than one interval short is NO-GO; a run that did not exit 0 is not given the benefit', async () => {
    expect(judge(await folder(mingpt, 0), ACC, 220)).toMatchObject({
      go: false,
      reasons: ['reached step 190 of 220'],
    });
    const cut = mingpt.slice(0, mingpt.indexOf('iter_dt', mingpt.indexOf('iter 190') - 30));
    expect(judge(await folder(cut, 1), ACC, 200).target?.reached).toBe(false);
    expect(judge(await folder(cut, null), ACC, 200).target?.reached).toBe(false);
  });

  it('logging every step: the target is the step itself, counted from the base', async () => {
    const lines = (from: number, to: number) =>
      Array.from(
        { length: to - from + 1 },
        (_, i) => `step ${from + i} loss ${(3 - i / 100).toFixed(3)}\n`,
      ).join('');
    // 0..9 is ten steps; 1..9 is nine
    expect(judge(await folder(lines(0, 9), 0), ACC, 10).target).toMatchObject({ reached: true });
    expect(judge(await folder(lines(1, 9), 0), ACC, 10)).toMatchObject({
      go: false,
      reasons: ['reached step 9 of 10'],
    });
  });

  it('a trainer that prints nothing and exits 0 is NO-GO with a target, and says no step line was recognised', async () => {
    const r = await folder('hello\nbye\n', 0);
    expect(judge(r, ACC, 200)).toMatchObject({ go: false, reasons: ['reached step 0 of 200'] });
    expect(r.notes.join(' ')).toMatch(/no line was recognised as a training step \(2 lines read/);
  });
});
