import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { IngestEvent, LogLineEvent, StepEvent, TracebackEvent } from '../../../src/ingest/events.js';
import { LineSplitter } from '../../../src/ingest/line-splitter.js';
import { StdoutParser } from '../../../src/ingest/stdout-parser.js';

// real H200 captures, kept beside the tests (test/fixtures/nsa-vibe-h200/README.md)
const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'nsa-vibe-h200');

function parseAll(text: string, p = new StdoutParser()): IngestEvent[] {
  const s = new LineSplitter();
  const out: IngestEvent[] = [];
  for (const l of [...s.push(text), ...s.flush()]) out.push(...p.push(l));
  out.push(...p.flush());
  return out;
}
const steps = (evs: IngestEvent[]) => evs.filter((e): e is StepEvent => e.kind === 'step');
const logs = (evs: IngestEvent[]) => evs.filter((e): e is LogLineEvent => e.kind === 'log');
const tbs = (evs: IngestEvent[]) => evs.filter((e): e is TracebackEvent => e.kind === 'traceback');

describe('StdoutParser: nsa-vibe', () => {
  it('parses the step line with every optional field', () => {
    const [s] = steps(
      parseAll(
        'step 0020 | loss 5.7667 | lr 8.40e-07 | toks/s 39 | grad_norm 0.00 | fetch 12ms | fetch_p50 10ms | fetch_p95 31ms\n',
      ),
    );
    expect(s).toEqual({
      kind: 'step',
      rank: 0,
      step: 20,
      loss: 5.7667,
      lr: 8.4e-7,
      toksPerS: 39,
      format: 'nsa-vibe',
    });
    expect(steps(parseAll('step 0003 | loss 5.1 | lr 1.00e-04 | toks/s 7 | FSDP\n'))[0]!.step).toBe(3);
  });

  it('reads the real batched capture: 17 steps, banners tagged, exit line', () => {
    const evs = parseAll(readFileSync(join(FIX, 'batched/stdout.log'), 'utf8'));
    expect(steps(evs).map((s) => s.step)).toEqual(Array.from({ length: 17 }, (_, i) => i + 1));
    const l = logs(evs);
    expect(l.find((e) => e.text.startsWith('[boot] effective'))?.tag).toBe('boot');
    expect(l.filter((e) => e.tag === 'debug').map((e) => e.step)).toEqual([1, 2, 3, 4, 5]);
    expect(l.at(-1)).toMatchObject({ tag: 'capture', text: '== exit 137' });
  });

  it('reads the real nan capture: FATAL line and the final metrics JSON', () => {
    const p = new StdoutParser();
    const evs = parseAll(readFileSync(join(FIX, 'nan/stdout.log'), 'utf8'), p);
    expect(logs(evs).find((e) => e.tag === 'fatal')?.text).toContain('non-finite loss');
    const m = evs.find((e) => e.kind === 'metrics');
    expect(m).toMatchObject({ metrics: { steps: 10, loss_last: 142602469376 } });
    expect(p.skippedLines).toBe(0);
  });

  it('tags [warn] [error] [GRAD-TRACE] [DDP] [train][FATAL] and sets rank from [rankN]:', () => {
    const evs = parseAll(
      [
        '[warn] Gate/fallback stats extraction failed: x',
        '[error] FineWeb‑Edu loader failed: StopIteration',
        '[rank1]:[GRAD-TRACE] after_backward_step3 arrived=185 missing=5',
        '[rank1]:  - MISSING: blocks.4.attn.gate_mlp.weight',
        '[DDP] rank=1 bucket_elems=1024 dtype=torch.bfloat16',
        '[rank0]:[train][FATAL] non-finite loss detected — aborting run.',
        '[rank1]:step 0002 | loss 5.7202 | lr 3.00e-05 | toks/s 80',
        'some ordinary text',
      ].join('\n'),
    );
    expect(logs(evs).map((e) => [e.tag, e.rank, e.step])).toEqual([
      ['warn', undefined, undefined],
      ['error', undefined, undefined],
      ['grad-trace', 1, 3],
      ['grad-trace', 1, undefined],
      ['ddp', undefined, undefined],
      ['fatal', 0, undefined],
      ['other', undefined, undefined],
    ]);
    expect(steps(evs)[0]).toMatchObject({ rank: 1, step: 2 });
  });

  it("a trainer's [constructor] or [toString] line is plain text, not one of Object.prototype's members", () => {
    const evs = parseAll('[constructor] built 12 layers\n[toString] x\n[hasOwnProperty]\n');
    expect(logs(evs).map((e) => e.tag)).toEqual(['other', 'other', 'other']);
  });

  it('survives carriage-return progress bars and ANSI escapes in the middle of step lines', () => {
    const text =
      'loading  10%\rloading 100%\r\x1b[32mstep 0001\x1b[0m | loss \x1b[1m5.7014\x1b[0m | lr 2.00e-05 | toks/s 66\n';
    const evs = parseAll(text);
    expect(steps(evs)).toMatchObject([{ step: 1, loss: 5.7014, toksPerS: 66 }]);
  });

  it('counts truncated or corrupted step lines as skipped, not as text', () => {
    const p = new StdoutParser();
    const evs = parseAll(
      'step 0005 | loss 5.73\nstep 0006 | loss 5.7\ufffd | lr 1.00e-04 | toks/s 5\nplain \ufffd text\n',
      p,
    );
    expect(steps(evs)).toHaveLength(0);
    expect(p.skippedLines).toBe(2);
    expect(logs(evs)).toHaveLength(1);
  });
});

describe('StdoutParser: tracebacks', () => {
  it('keeps exception type, multi-line message and frames', () => {
    const evs = parseAll(
      [
        'Traceback (most recent call last):',
        '  File "/root/nsa-vibe/scripts/train_showcase.py", line 1247, in main',
        '    logits = model(x)',
        '  File "/root/nsa-vibe/nsa/core/attention_kernels.py", line 469, in sliding_window_attention_fa2',
        '    out = flash_attn_varlen_func(q, k, v, cu_seqlens_q)',
        '           ^^^^^^^^^^^^^^^^^^^^^^',
        'RuntimeError: CUDA error: an illegal memory access was encountered',
        'CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.',
        'For debugging consider passing CUDA_LAUNCH_BLOCKING=1',
        '',
        'step 0001 | loss 5.7014 | lr 2.00e-05 | toks/s 66',
      ].join('\n'),
    );
    const [tb] = tbs(evs);
    expect(tb!.exception).toBe('RuntimeError');
    expect(tb!.message.split('\n')).toHaveLength(3);
    expect(tb!.frames.map((f) => f.line)).toEqual([1247, 469]);
    expect(tb!.frames[1]!.code).toBe('out = flash_attn_varlen_func(q, k, v, cu_seqlens_q)');
    expect(steps(evs)).toHaveLength(1);
  });

  it("separates interleaved per-rank tracebacks and reads torchrun's root cause", () => {
    const evs = parseAll(readFileSync('test/fixtures/synthetic/torchrun_ddp_crash.log', 'utf8'));
    const t = tbs(evs);
    // rank 0's message has no closing blank line: it ends when the stream does (flush)
    expect(t.map((e) => [e.rank, e.exception])).toEqual([
      [1, 'RuntimeError'],
      [undefined, 'ChildFailedError'],
      [0, 'torch.distributed.DistBackendError'],
    ]);
    expect(t[0]!.frames.at(-1)?.function).toBe('_engine_run_backward');
    expect(t[1]!.torchrun).toEqual({
      rootCauseRank: 1,
      rootCauseExitCode: 1,
      failures: [
        { rank: 1, exitCode: 1 },
        { rank: 0, exitCode: 1 },
      ],
    });
    expect(logs(evs).find((e) => e.tag === 'torchrun')?.rank).toBe(1);
  });
});

describe('StdoutParser: other trainers', () => {
  it('nanoGPT iter lines', () => {
    expect(steps(parseAll('iter 100: loss 4.2345, time 123.45ms, mfu 12.34%\n'))).toMatchObject([
      { step: 100, loss: 4.2345, format: 'nanogpt' },
    ]);
  });

  it('torchtitan lines (with their logger prefix and colours)', () => {
    const line =
      '[titan] 2025-01-01 12:00:00,000 - root - INFO - \x1b[31mstep:  7  \x1b[32mloss: 10.8123  \x1b[33mmemory: 15.01GiB(15.80%)  \x1b[34mtps: 12,345  \x1b[35mtflops: 12.3  mfu: 4.5%\x1b[39m';
    expect(steps(parseAll(`${line}\n`))).toMatchObject([
      { step: 7, loss: 10.8123, toksPerS: 12345, format: 'torchtitan' },
    ]);
  });

  it('Hugging Face dict lines without a bar (disable_tqdm): the n-th loss dict is step n', () => {
    const evs = parseAll(
      "{'loss': 2.3, 'grad_norm': 1.5, 'learning_rate': 5e-05, 'epoch': 0.1}\n{'eval_loss': 2.1}\n{'loss': 2.1, 'learning_rate': 4e-05, 'epoch': 0.2}\n{'train_runtime': 12.5, 'train_loss': 2.2}\n",
    );
    expect(steps(evs).map((s) => [s.step, s.loss, s.lr])).toEqual([
      [1, 2.3, 5e-5],
      [2, 2.1, 4e-5],
    ]);
    expect(evs.some((e) => e.kind === 'metrics')).toBe(true);
  });

  it("a preset's step regex", () => {
    const p = new StdoutParser({ stepRegex: /^it=(?<step>\d+) L=(?<loss>[\d.]+) tps=(?<toks>\d+)/ });
    expect(steps(parseAll('it=12 L=3.25 tps=900\n', p))).toMatchObject([
      { step: 12, loss: 3.25, toksPerS: 900, format: 'preset-regex' },
    ]);
  });
});
