// Capture test/fixtures/nanogpt-evals/: a REAL nanoGPT run (test/fixtures/trainers/nanogpt,
// unpatched, CPU torch) under `nsa-dbg run --headless`, evaluating every 50 iterations (each
// evaluation also saves a checkpoint: a periodic slow step) with one iteration made long on
// purpose (the config/test_hooks.py `busy` hook: ~12 s in one native call, at iteration 572).
// The run folder is copied with this machine's temp paths replaced. Run after `npm run build`:
//   node test/helpers/capture-nanogpt-evals.mjs
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = realpathSync(join(import.meta.dirname, '..', '..'));
const vendored = join(root, 'test', 'fixtures', 'trainers', 'nanogpt');
const out = join(root, 'test', 'fixtures', 'nanogpt-evals');
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'nanogpt-evals-')));
for (const f of ['train.py', 'model.py', 'configurator.py']) copyFileSync(join(vendored, f), join(dir, f));
cpSync(join(vendored, 'config'), join(dir, 'config'), { recursive: true });
mkdirSync(join(dir, 'data', 'tiny'), { recursive: true });
const data = [
  'import numpy as np, pickle',
  'text = (b"the quick brown fox jumps over the lazy dog. " * 400)',
  'ids = np.frombuffer(text, dtype=np.uint8).astype(np.uint16)',
  'ids[: len(ids) * 9 // 10].tofile("data/tiny/train.bin")',
  'ids[len(ids) * 9 // 10 :].tofile("data/tiny/val.bin")',
  'pickle.dump({"vocab_size": 256}, open("data/tiny/meta.pkl", "wb"))',
].join('\n');
spawnSync('/usr/bin/python3', ['-c', data], { cwd: dir, stdio: 'inherit' });
const env = {
  ...process.env,
  NSA_DBG_HOME: join(dir, 'home'),
  NANO_HOOK: 'busy',
  // nanoGPT clips once per iteration: the 573rd clip is iteration 572's
  NANO_HOOK_AT: '573',
  NANO_BUSY_S: '12',
};
const r = spawnSync(
  process.execPath,
  [
    join(root, 'bin', 'nsa-dbg'),
    'run',
    '--headless',
    '--json',
    '--lane',
    'nanogpt',
    '--steps',
    '600',
    '--runs-dir',
    'runs',
    '--',
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
    '--eval_interval=50',
    '--log_interval=1',
    '--out_dir=out',
  ],
  { cwd: dir, env, encoding: 'utf8' },
);
process.stderr.write(`exit ${r.status}\n${r.stderr}\n`);
const run = join(dir, 'runs', readdirSync(join(dir, 'runs'))[0]);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const f of readdirSync(run, { withFileTypes: true })) {
  if (!f.isFile()) continue;
  const text = readFileSync(join(run, f.name), 'utf8');
  writeFileSync(join(out, f.name), text.split(dir).join('/home/user/nanogpt'));
}
rmSync(dir, { recursive: true, force: true });
process.stderr.write(`wrote ${out}\n`);
