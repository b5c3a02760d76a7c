/**
 * Karpathy's minGPT, unpatched (test/fixtures/trainers/mingpt/), its chargpt project in a temp dir
 * of its own with a small `input.txt`, and the command line that makes an iteration take ~20–100 ms
 * on CPU. chargpt prints `iter_dt …ms; iter N: train loss …` every 10 iterations counting from 0,
 * samples from "O God, O God!" at iteration 0 (the text must hold those characters) and takes its
 * options as `--section.key=value`.
 */
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const VENDORED = join(import.meta.dirname, '..', 'fixtures', 'trainers', 'mingpt');

/** minGPT's files and `input.txt` in a new temp dir; returns it (run chargpt.py from here) */
export function minGptDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mingpt-'));
  cpSync(join(VENDORED, 'mingpt'), join(dir, 'mingpt'), { recursive: true });
  cpSync(join(VENDORED, 'projects', 'chargpt', 'chargpt.py'), join(dir, 'chargpt.py'));
  writeFileSync(
    join(dir, 'input.txt'),
    'First Citizen: Before we proceed any further, hear me speak. O God, O God! '.repeat(300),
  );
  return dir;
}

/** the trainer command (after `--`); `maxIters` passed only when given */
export function minGptCommand(maxIters?: number): string[] {
  return [
    '/usr/bin/python3',
    '-u',
    'chargpt.py',
    '--model.model_type=gpt-nano',
    '--trainer.num_workers=0',
    '--data.block_size=32',
    '--trainer.batch_size=8',
    ...(maxIters === undefined ? [] : [`--trainer.max_iters=${maxIters}`]),
  ];
}

/** chargpt imports `mingpt` from the folder it runs in */
export const minGptEnv = (dir: string) => ({ PYTHONPATH: dir });
