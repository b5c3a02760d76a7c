/**
 * Karpathy's nanoGPT, unpatched (test/fixtures/trainers/nanogpt/), in a temp dir of its own with a
 * tiny byte-level dataset, and the command line that makes an iteration take ~50–100 ms on CPU.
 */

import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const VENDORED = join(import.meta.dirname, '..', 'fixtures', 'trainers', 'nanogpt');

/** nanoGPT's files and `data/tiny/{train,val}.bin` + meta.pkl in a new temp dir; returns it */
export function nanoGptDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'nanogpt-'));
  for (const f of ['train.py', 'model.py', 'configurator.py']) copyFileSync(join(VENDORED, f), join(dir, f));
  cpSync(join(VENDORED, 'config'), join(dir, 'config'), { recursive: true });
  mkdirSync(join(dir, 'data', 'tiny'), { recursive: true });
  const py = [
    'import numpy as np, pickle, os',
    'text = (b"the quick brown fox jumps over the lazy dog. " * 400)',
    'ids = np.frombuffer(text, dtype=np.uint8).astype(np.uint16)',
    'ids[: len(ids) * 9 // 10].tofile("data/tiny/train.bin")',
    'ids[len(ids) * 9 // 10 :].tofile("data/tiny/val.bin")',
    'pickle.dump({"vocab_size": 256}, open("data/tiny/meta.pkl", "wb"))',
  ].join('\n');
  const r = spawnSync('/usr/bin/python3', ['-c', py], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`nanoGPT dataset: ${r.stderr}`);
  return dir;
}

/** the trainer command (after `--`), `max_iters` iterations, checkpoints into `outDir` */
export function nanoGptCommand(outDir: string, maxIters?: number): string[] {
  return [
    '/usr/bin/python3',
    '-u',
    'train.py',
    'config/test_hooks.py',
    '--dataset=tiny',
    '--device=cpu',
    '--compile=False',
    '--dtype=float32',
    '--n_layer=2',
    '--n_head=2',
    '--n_embd=64',
    '--block_size=64',
    '--batch_size=4',
    '--gradient_accumulation_steps=1',
    '--eval_iters=2',
    '--eval_interval=100000',
    '--log_interval=1',
    `--out_dir=${outDir}`,
    ...(maxIters === undefined ? [] : [`--max_iters=${maxIters}`]),
  ];
}
