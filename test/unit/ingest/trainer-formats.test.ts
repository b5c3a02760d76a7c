/**
 * The step lines of the trainers people run, read with no lane regex from their output (captures
 * and generators under test/fixtures/trainer-formats/, README.md there says where each comes from),
 * through the path a run's stdout.log takes: a progress splitter, then HeldOutput's parser.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { IngestEvent, StepEvent } from '../../../src/ingest/events.js';
import { HeldOutput } from '../../../src/ingest/held-output.js';
import { LineSplitter } from '../../../src/ingest/line-splitter.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'trainer-formats');

interface Read {
  events: IngestEvent[];
  steps: StepEvent[];
  /** the lines the log pane gets */
  lines: string[];
  skipped: number;
}

/** bytes as a run's stdout.log is read (live or offline): in `chunks` pieces */
function read(bytes: Buffer, chunk = bytes.length): Read {
  const r: Read = { events: [], steps: [], lines: [], skipped: 0 };
  const out = new HeldOutput({
    onLine: (l) => r.lines.push(l),
    onParsed() {},
    onEvent: (e) => r.events.push(e),
    onSkipped: (n) => {
      r.skipped += n;
    },
  });
  const split = new LineSplitter({ progress: true });
  for (let i = 0; i < bytes.length; i += chunk)
    for (const l of split.push(bytes.subarray(i, i + chunk))) out.push(l);
  for (const l of split.flush()) out.push(l);
  out.end();
  r.steps = r.events.filter((e): e is StepEvent => e.kind === 'step');
  return r;
}
const fixture = (trainer: string) => read(readFileSync(join(FIX, trainer, 'stdout.log')));
/** step → loss of the events that carry one */
const losses = (steps: StepEvent[]) => steps.filter((s) => s.loss !== undefined).map((s) => [s.step, s.loss]);

describe('trainer formats, out of the box', () => {
  it('minGPT chargpt (a real CPU run): iter 0 and every 10th, its iter_dt as the step time', () => {
    const r = fixture('mingpt');
    expect(r.steps.map((s) => [s.step, s.loss, s.seconds])).toEqual([
      [0, 3.50856, undefined], // iter_dt 0.00ms: nothing measured yet
      [10, 3.10028, 3.9431],
      [20, 2.89722, 4.49886],
      [30, 2.734, 3.39768],
      [40, 2.59261, 2.81316],
      [50, 2.45481, 3.78138],
    ]);
    expect(new Set(r.steps.map((s) => s.format))).toEqual(new Set(['mingpt']));
    expect(r.skipped).toBe(0);
  });

  it('Hugging Face Trainer: each log dict takes the step of the bar drawn after it, the bar gives N of M and it/s', () => {
    const r = fixture('hf');
    // logging_steps=10: the dicts are steps 10..40 (the bar drawn before the first read 8/40)
    expect(losses(r.steps)).toEqual([
      [10, 2.3],
      [20, 2.1],
      [30, 1.9],
      [40, 1.7],
    ]);
    expect(r.steps.find((s) => s.step === 20 && s.loss !== undefined)?.lr).toBe(2.5e-5);
    expect(r.steps.every((s) => s.total === 40)).toBe(true);
    // the bar's own drawings: 4/40 at 32.35it/s, …; the evaluation bar (…/5) is no step
    expect(r.steps[0]).toMatchObject({ step: 4, format: 'tqdm' });
    expect(r.steps[0]!.seconds).toBeCloseTo(1 / 32.35, 6);
    expect(Math.max(...r.steps.map((s) => s.step))).toBe(40);
    expect(r.steps.filter((s) => s.loss !== undefined).every((s) => s.format === 'hf')).toBe(true);
    expect(r.events.find((e) => e.kind === 'metrics')).toMatchObject({ metrics: { train_runtime: 1.9 } });
    // one log line per line of the terminal, not one per redraw
    expect(r.lines.length).toBe(readFileSync(join(FIX, 'hf', 'stdout.log'), 'utf8').split('\n').length - 1);
  });

  it('PyTorch Lightning: steps go on across epochs, the loss is the one drawn after the position', () => {
    const r = fixture('lightning');
    const l = losses(r.steps);
    expect(l).toHaveLength(24);
    // train_loss of batch k is 2.5 - 0.05k (generate.py); epoch 1's batch 1 is step 13
    expect(l.slice(0, 2)).toEqual([
      [1, 2.45],
      [2, 2.4],
    ]);
    expect(l[12]).toEqual([13, 1.85]);
    expect(l.at(-1)).toEqual([24, 1.3]);
    // sanity-check and validation bars are no steps
    expect(new Set(r.steps.map((s) => s.step)).size).toBe(24);
    expect(r.steps.every((s) => s.format === 'lightning' && s.total === undefined)).toBe(true);
    // `1/12 [00:00<00:00, 19.80it/s]`, then `19.66it/s, v_num=0, train_loss=2.450`
    expect(r.steps.slice(0, 2).map((s) => [s.step, s.loss, s.seconds])).toEqual([
      [1, undefined, 1 / 19.8],
      [1, 2.45, 1 / 19.66],
    ]);
  });

  it('Megatron-LM: iteration N of M, ms per iteration, lm loss, learning rate', () => {
    const r = fixture('megatron');
    expect(r.steps).toHaveLength(5);
    expect(r.steps[0]).toMatchObject({
      step: 10,
      total: 50,
      loss: 9.5,
      lr: 6e-5,
      seconds: 1.2445,
      format: 'megatron',
    });
    expect(r.steps.at(-1)).toMatchObject({ step: 50, total: 50, loss: 5.5, seconds: 1.2845 });
  });

  it("DeepSpeed: the pipeline engine's loss and iter time, the engine's step= and global_step= reports", () => {
    const r = fixture('deepspeed');
    expect(losses(r.steps)).toEqual([
      [10, 2.9],
      [20, 2.8],
      [30, 2.7],
    ]);
    expect(r.steps.filter((s) => s.loss !== undefined).map((s) => s.seconds)).toEqual([0.135, 0.145, 0.155]);
    const reports = r.steps.filter((s) => s.loss === undefined);
    expect(reports.map((s) => s.step)).toEqual([10, 10, 20, 20, 30, 30]);
    expect(reports[0]!.lr).toBeCloseTo(3.3333e-5, 9);
  });

  it('litgpt: iter N with its iter time; its val line is no step', () => {
    const r = fixture('litgpt');
    expect(r.steps.map((s) => [s.step, s.loss, s.seconds])).toEqual([
      [1, 3.9, 0.201],
      [2, 3.8, 0.202],
      [3, 3.7, 0.203],
      [4, 3.6, 0.204],
      [5, 3.5, 0.205],
      [6, 3.4, 0.206],
      [7, 3.3, 0.207],
      [8, 3.2, 0.208],
      [9, 3.1, 0.2105],
    ]);
    expect(r.skipped).toBe(0);
  });

  it('torchtitan (current source, colours): tps as toks/s; its validate step line is no step', () => {
    const r = fixture('torchtitan');
    expect(r.steps.map((s) => [s.step, s.loss, s.toksPerS])).toEqual([
      [1, 12.05, 1100],
      [10, 10.25, 2000],
      [20, 8.25, 3000],
    ]);
  });

  it('a JSON logger (python-json-logger, a real torch loop): step, loss (NaN too), lr, step_time', () => {
    const r = fixture('jsonl');
    expect(r.steps.map((s) => s.step)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(r.steps[0]).toMatchObject({ loss: 10.28236, lr: 0.05, seconds: 0.013793, format: 'jsonl' });
    expect(r.steps[12]!.loss).toBeNaN();
    expect(r.skipped).toBe(0);
  });
});

describe('trainer formats: what is not a step', () => {
  it('counts cut-off step lines as skipped, not as steps or text', () => {
    const r = read(
      Buffer.from(
        [
          'iter_dt 28.52ms; iter 30: train loss 3.7\ufffd', // minGPT, a byte lost
          'Epoch 1 | iter 3 step 1 | loss train: 3.7', // litgpt, cut short
          'steps: 10 loss: 2.9000 iter ti', // DeepSpeed, cut short
          '{"step": 4, "loss": 2.5, "lr"', // a JSON record, cut short
          'iter_dt 28.52ms; iter 40: train loss 3.60000',
        ].join('\n'),
      ),
    );
    expect(r.steps.map((s) => [s.step, s.loss, s.seconds])).toEqual([[40, 3.6, 0.02852]]);
    expect(r.skipped).toBe(4);
    expect(r.events.filter((e) => e.kind === 'log')).toEqual([]);
  });

  it('a bar that names no training (loading a checkpoint) is no step', () => {
    const load = '\rLoading checkpoint shards:  50%|#####     | 1/2 [00:01<00:01, 1.50s/it]';
    const r = read(
      Buffer.from(`${load}\rLoading checkpoint shards: 100%|##########| 2/2 [00:03<00:00, 1.50s/it]\n`),
    );
    expect(r.steps).toEqual([]);
    expect(r.lines).toHaveLength(1);
    const train = read(Buffer.from('\rTraining:  50%|#####     | 1/2 [00:01<00:01, 1.50s/it]\n'));
    expect(train.steps).toMatchObject([{ step: 1, total: 2, seconds: 1.5, format: 'tqdm' }]);
  });

  it("Megatron's line under a torchrun prefix that adds its own space", () => {
    const line =
      '[rank7]:  [2026-08-22 15:30:12.340000] iteration       10/      50 | elapsed time per iteration (ms): 1244.5 | lm loss: 9.500000E+00 |';
    expect(read(Buffer.from(`${line}\n`)).steps).toMatchObject([{ rank: 7, step: 10, total: 50, loss: 9.5 }]);
  });
});

describe('tqdm redraws are progress as they arrive', () => {
  const bar = (n: number, rate: string, post = '') =>
    `\r${String(n * 10).padStart(3)}%|#         | ${n}/10 [00:01<00:09, ${rate}${post}]`;

  it('a bar that has not ended its line gives its steps, and no log line, before its newline', () => {
    const lines: string[] = [];
    const events: IngestEvent[] = [];
    const out = new HeldOutput({
      onLine: (l) => lines.push(l),
      onParsed() {},
      onEvent: (e) => events.push(e),
      onSkipped() {},
    });
    const split = new LineSplitter({ progress: true });
    const push = (text: string) => {
      for (const l of split.push(Buffer.from(text))) out.push(l);
    };
    push(bar(1, '1.25it/s') + bar(2, '1.25it/s', ', loss=2.300'));
    push(bar(3, '2.00s/it'));
    // drawings 1 and 2 are steps; the last one waits for what follows it (a \n makes it the line)
    expect(events.map((e) => e.kind === 'step' && [e.step, e.loss, e.seconds, e.total])).toEqual([
      [1, undefined, 0.8, 10],
      [2, 2.3, 0.8, 10],
    ]);
    expect(lines).toEqual([]);
    push('\n');
    expect(lines).toEqual([bar(3, '2.00s/it').slice(1)]);
    expect(events.at(-1)).toMatchObject({ kind: 'step', step: 3, seconds: 2 });
  });

  it('gives the same events however the bytes are chunked', () => {
    const bytes = readFileSync(join(FIX, 'hf', 'stdout.log'));
    const whole = read(bytes);
    for (const chunk of [1, 7, 64, 333]) {
      const r = read(bytes, chunk);
      expect(r.events).toEqual(whole.events);
      expect(r.lines).toEqual(whole.lines);
    }
  });
});
