import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StdoutParser } from '../../../src/ingest/stdout-parser.js';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';
import { makeRun } from './run-dir.js';

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures');
const read = (p: string) => readFileSync(join(FIXTURES, p), 'utf8');

/** a worker traceback with torchrun's prefix on every line */
function tb(prefix: string, frames: Array<[string, number, string]>, exception: string): string {
  const lines = ['Traceback (most recent call last):'];
  for (const [file, line, fn] of frames) lines.push(`  File "${file}", line ${line}, in ${fn}`, '    x()');
  lines.push(exception);
  return `${lines.map((l) => `${prefix}${l}`).join('\n')}\n`;
}

const TRAIN = '/srv/job/train.py';
const TORCH = '/usr/lib/python3/dist-packages/torch/_tensor.py';
const table = (rootRank: number, others: Array<[number, number]>) =>
  [
    'Traceback (most recent call last):',
    '  File "/usr/lib/python3/dist-packages/torch/distributed/run.py", line 762, in main',
    '    run(args)',
    'torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ',
    '============================================================',
    'train.py FAILED',
    '------------------------------------------------------------',
    'Failures:',
    ...others.flatMap(([r, code], i) => [
      `[${i + 1}]:`,
      `  rank      : ${r} (local_rank: ${r})`,
      `  exitcode  : ${code} (pid: ${100 + r})`,
    ]),
    '------------------------------------------------------------',
    'Root Cause (first observed failure):',
    '[0]:',
    `  rank      : ${rootRank} (local_rank: ${rootRank})`,
    '  exitcode  : 1 (pid: 100)',
    '============================================================',
    '',
  ].join('\n');

describe('root cause of a multi-rank crash', () => {
  it('real torchrun + gloo, 3 ranks: the rank that raised first, not the one torchrun observed first', async () => {
    // captured from test/fixtures/trainers/ddp_ranks.py crash under torch 1.13 torchrun --tee 2
    const r = await analyzeDir(makeRun({ 'stdout.log': read('torchrun-gloo/crash-3ranks.log') }));
    expect(r.verdict).toBe('crash');
    expect(r.crash).toMatchObject({
      rank: 2,
      step: 3,
      exception: 'ValueError',
      basis: 'first-exception',
      torchrunRootCause: 0,
    });
    expect(r.crash!.message).toMatch(/^bad batch at step 3/);
    expect(r.crash!.frame).toMatchObject({ function: 'bad_batch', file: '/srv/ddp/ddp_ranks.py', line: 69 });
    expect(r.crash!.consequences!.map((c) => c.rank)).toEqual([0, 1]);
    expect(r.crash!.consequences![0]!.message).toMatch(/Connection closed by peer/);
    expect(r.summary).toMatch(/rank 2: ValueError.*first observed failure: rank 0/);
    expect(r.ranks).toEqual([0, 1, 2]);
    expect(r.stepsReached).toBe(2);
  });

  it('[rankN]: prefixes: NCCL "remote process exited" on rank 0 is a consequence of rank 1', async () => {
    const log =
      tb(
        '[rank0]:',
        [[TRAIN, 90, 'main']],
        'torch.distributed.DistBackendError: NCCL error: remote process exited or there was a network error',
      ) +
      tb(
        '[rank1]:',
        [
          [TRAIN, 90, 'main'],
          [TRAIN, 40, 'loss_fn'],
        ],
        'IndexError: index 9 is out of bounds',
      ) +
      table(0, [[1, 1]]);
    const r = await analyzeDir(makeRun({ 'stdout.log': log }));
    expect(r.crash).toMatchObject({ rank: 1, exception: 'IndexError', torchrunRootCause: 0 });
    expect(r.crash!.frame).toMatchObject({ function: 'loss_fn', line: 40 });
  });

  it('[defaultN]: the same exception on every rank is reported once, with the ranks', async () => {
    const msg =
      'RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.';
    const log =
      [2, 0, 1]
        .map((r) =>
          tb(
            `[default${r}]:`,
            [
              [TRAIN, 77, 'main'],
              [TORCH, 488, 'backward'],
            ],
            msg,
          ),
        )
        .join('') +
      table(0, [
        [1, 1],
        [2, 1],
      ]);
    const r = await analyzeDir(makeRun({ 'stdout.log': log }));
    expect(r.crash).toMatchObject({ rank: 2, ranks: [0, 1, 2], exception: 'RuntimeError' });
    expect(r.crash!.frame).toMatchObject({ function: 'main', line: 77 });
    expect(r.crash!.consequences).toBeUndefined();
    expect(r.summary).toMatch(/ranks 0–2: RuntimeError: Expected to have finished reduction/);
  });

  it('only consequences, and one failed rank without a traceback: that rank died (signal, native crash)', async () => {
    const closed =
      'RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:1234';
    const log =
      tb('[default0]:', [[TRAIN, 90, 'main']], closed) +
      tb('[default1]:', [[TRAIN, 90, 'main']], closed) +
      table(0, [
        [1, 1],
        [2, -9],
      ]);
    const r = await analyzeDir(makeRun({ 'stdout.log': log }));
    expect(r.crash).toMatchObject({ rank: 2, basis: 'died-silently', frame: null });
  });

  it('only consequences and every failed rank printed one: the first of them, marked as such', async () => {
    const timeout =
      'RuntimeError: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.';
    const log = tb('[default1]:', [[TRAIN, 90, 'main']], timeout) + '== exit 1\n';
    const r = await analyzeDir(makeRun({ 'stdout.log': log }));
    expect(r.crash).toMatchObject({ rank: 1, basis: 'single' });
  });

  it('a single process keeps its last chained exception', async () => {
    const log = `${tb('', [[TRAIN, 5, 'load']], 'KeyError: x')}\nDuring handling of the above exception, another exception occurred:\n\n${tb('', [[TRAIN, 9, 'main']], 'RuntimeError: config broken')}== exit 1\n`;
    const r = await analyzeDir(makeRun({ 'stdout.log': log }));
    expect(r.crash).toMatchObject({ rank: 0, exception: 'RuntimeError', basis: 'single' });
  });
});

describe('the real 2x H200 NCCL capture (torchrun --tee 3, [defaultN]: on every worker line)', () => {
  it('reads the prefixed step lines as rank 0 and judges the freeze a pass with a slow step 6', async () => {
    const r = await analyzeDir(join(FIXTURES, 'nsa-vibe-2xh200-nccl', 'freeze'));
    expect(r.verdict === 'pass' || r.verdict === 'slow').toBe(true);
    expect(r.stepsReached).toBe(25);
    expect(r.ranks).toEqual([0, 1]);
    expect(r.crash).toBeNull();
    expect(r.throughput!.medianToksPerS).toBeGreaterThan(150);
    expect(r.throughput!.medianToksPerS).toBeLessThan(200);
    expect(r.pastStalls.some((p) => p.step === 6)).toBe(true);
    expect(r.dumps).toHaveLength(2);
  });
});

describe('torchrun prefixes', () => {
  it('[defaultN]: and [rankN]: give the rank; the line itself is parsed as usual', () => {
    const p = new StdoutParser();
    expect(p.push('[default1]:step 0004 | loss 5.7118 | lr 5.00e-05 | toks/s 170')).toEqual([
      expect.objectContaining({ kind: 'step', rank: 1, step: 4, loss: 5.7118 }),
    ]);
    expect(p.push('[rank3]: [ddp] process group ready | backend=gloo world_size=4 timeout_min=30')).toEqual([
      expect.objectContaining({ kind: 'log', rank: 3, tag: 'ddp' }),
    ]);
    // a line indented by the program keeps its indentation
    expect(p.push('[default0]:  "time": 1')[0]).toMatchObject({ rank: 0, text: '  "time": 1' });
  });
});
