import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Evidence } from '../../../src/analysis/evidence.js';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';
import { healthyBeats, makeRun, stepLines } from './run-dir.js';

// real H200 captures, kept beside the tests (test/fixtures/nsa-vibe-h200/README.md)
const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'nsa-vibe-h200');

const tb = (
  exception: string,
  file = '/root/nsa-vibe/nsa/core/attention_kernels.py',
  fn = 'sliding_window_attention_fa2',
) =>
  [
    'Traceback (most recent call last):',
    '  File "/root/nsa-vibe/scripts/train_showcase.py", line 1247, in main',
    '    logits = model(x)',
    `  File "${file}", line 469, in ${fn}`,
    '    out = f(q)',
    '  File "/root/venv/lib/python3.12/site-packages/torch/nn/functional.py", line 10, in f',
    '    return g()',
    exception,
    '',
  ].join('\n');

async function verdictOf(stdout: string, extra: Record<string, string> = {}) {
  return analyzeDir(makeRun({ 'stdout.log': stdout, ...extra }));
}

describe('failure signatures (synthetic)', () => {
  it('CUDA illegal memory access → crash with the user frame', async () => {
    const r = await verdictOf(
      `[debug] step 1: input shape torch.Size([1, 512]), seq_len 512\n${tb('RuntimeError: CUDA error: an illegal memory access was encountered')}== exit 1\n`,
    );
    expect(r.verdict).toBe('crash');
    expect(r.crash).toMatchObject({
      rank: 0,
      step: 1,
      exception: 'RuntimeError',
      frame: { function: 'sliding_window_attention_fa2', line: 469 },
    });
    expect(r.signatures.map((s) => s.name)).toEqual(['cuda-illegal-memory-access']);
  });

  it('CUDA OOM → crash', async () => {
    const r = await verdictOf(
      `${stepLines(2)}${tb('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.')}`,
    );
    expect(r.verdict).toBe('crash');
    expect(r.crash).toMatchObject({ step: 3, exception: 'torch.OutOfMemoryError' });
    expect(r.signatures[0]!.name).toBe('cuda-oom');
  });

  it('OOM counted in mem_*.json → signature', async () => {
    const r = await verdictOf(stepLines(2), {
      'mem_step1.json': '{"num_ooms": 2, "reserved_bytes.all.peak": 1073741824}',
    });
    expect(r.signatures.map((s) => s.name)).toContain('cuda-oom');
    expect(r.memory!.peakReservedMiB).toBe(1024);
  });

  it('NCCL timeout → hang (a collective waited for a rank that stopped)', async () => {
    const r = await verdictOf(
      `${stepLines(3)}[rank0]:[E1122 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=900000) ran for 900117 milliseconds before timing out.\n`,
    );
    expect(r.verdict).toBe('hang');
    expect(r.signatures.map((s) => s.name)).toEqual(['nccl-timeout']);
  });

  it('watchdog dump of a run that never finished → hang, with the missing grads', async () => {
    const dir = makeRun({ 'stdout.log': stepLines(1), heartbeats: { 0: healthyBeats(1, 2, 1795315790) } });
    copyFileSync(
      'test/fixtures/synthetic/watchdog_stackdump_1795316000.txt',
      join(dir, 'watchdog_stackdump_1795316000.txt'),
    );
    const r = await analyzeDir(dir);
    expect(r.verdict).toBe('hang');
    expect(r.stall).toMatchObject({ rank: 0, step: 1, where: 'rollover' });
    expect(r.dumps[0]).toMatchObject({
      kind: 'watchdog',
      mainThreadTop: { function: '_engine_run_backward' },
    });
    expect(r.missingGrads).toEqual([{ rank: 0, missing: 2 }]);
  });

  it('DDP "marked ready twice" under torchrun → crash on the root-cause rank', async () => {
    const r = await verdictOf(readFileSync('test/fixtures/synthetic/torchrun_ddp_crash.log', 'utf8'));
    expect(r.verdict).toBe('crash');
    expect(r.crash).toMatchObject({ rank: 1, step: 1, exception: 'RuntimeError' });
    expect(r.crash!.frame).toMatchObject({ function: 'main', line: 1290 });
    expect(r.signatures.map((s) => s.name)).toEqual(
      expect.arrayContaining(['ddp-marked-ready-twice', 'nccl-timeout']),
    );
    expect(r.ranks).toEqual([0, 1]);
  });

  it("torchrun's root cause is evidence: a worker's own exception beats it", async () => {
    const log = readFileSync('test/fixtures/synthetic/torchrun_ddp_crash.log', 'utf8')
      .split('\n')
      .filter((l) => !l.startsWith('[rank1]:'))
      .join('\n');
    const r = await verdictOf(`[rank0]:${tb('ValueError: boom').split('\n').join('\n[rank0]:')}\n${log}`);
    expect(r.crash).toMatchObject({ rank: 0, exception: 'ValueError', torchrunRootCause: 1 });
  });

  it('missing grads [GRAD-TRACE] missing=N → noted per rank', async () => {
    const r = await verdictOf(
      `${stepLines(1)}[rank1]:[GRAD-TRACE] after_backward_step2 arrived=185 missing=5\n[rank1]:  - MISSING: blocks.4.attn.gate_mlp.weight\n`,
    );
    expect(r.missingGrads).toEqual([{ rank: 1, step: 2, missing: 5 }]);
    expect(r.signatures.map((s) => s.name)).toEqual(['missing-grads']);
  });

  it('fp16 unscale → crash', async () => {
    const r = await verdictOf(
      `${stepLines(7)}${tb('ValueError: Attempting to unscale FP16 gradients.', '/root/nsa-vibe/scripts/train_showcase.py', 'main')}`,
    );
    expect(r.verdict).toBe('crash');
    expect(r.crash).toMatchObject({ step: 8, exception: 'ValueError' });
    expect(r.signatures[0]!.name).toBe('fp16-unscale');
  });

  it('non-finite loss in a step line → nan at that step', async () => {
    const r = await verdictOf(
      `${stepLines(4)}[repro] step 5 ok | loss nan\nstep 0005 | loss nan | lr 1.00e-04 | toks/s 80\n`,
    );
    expect(r.verdict).toBe('nan');
    expect(r.nan).toEqual({ rank: 0, step: 5 });
  });

  it('NaN loss in a heartbeat (Python literal) → nan', async () => {
    const beats = healthyBeats(3);
    beats.push({ step: 4, ts: 1010, msg: 'progress', loss: 'NaN' });
    const r = await analyzeDir(makeRun({ heartbeats: { 0: beats } }));
    expect(r.verdict).toBe('nan');
    expect(r.nan).toEqual({ rank: 0, step: 4 });
  });
});

/** two ranks: rank 1 stops beating in step 4 while rank 0 waits (and dumps 200 s later) */
function rank1StallsInStep4() {
  const r0 = healthyBeats(3, 2, 5000);
  const r1 = healthyBeats(3, 2, 5000, { progress: false });
  r1.push({ step: 4, ts: 5006.01, msg: 'beat', phase: 'step_start' });
  r0.push({ step: 4, ts: 5006.5, msg: 'beat', phase: 'step_start' });
  r0.push({ step: 0, ts: 5200, msg: 'watchdog_dump' });
  return { 0: r0, 1: r1 };
}

describe('hang vs incomplete vs pass vs stopped', () => {
  it('evidence ends inside a step, then a dump 30 s later → hang, localised', async () => {
    const beats = healthyBeats(5, 2, 1795315000);
    beats.push({ step: 6, ts: 1795315011, msg: 'beat', phase: 'step_start' });
    const dump = readFileSync(join(FIX, 'batched/stackdump_1795315501.txt'), 'utf8').replace(
      'Signal 10 at 2026-11-22T02:45:01.782481Z',
      `Signal 10 at ${new Date(1795315041 * 1000).toISOString()}`,
    );
    const r = await analyzeDir(
      makeRun({ heartbeats: { 0: beats }, 'stackdump_1795315041.txt': dump, exit_code: '137\n' }),
    );
    expect(r.verdict).toBe('hang');
    expect(r.stall).toMatchObject({ rank: 0, step: 6, where: 'in-step' });
    expect(r.summary).toContain('hang at step 6 (in-step), rank 0');
  });

  it('the same evidence without anything after the last beat → incomplete', async () => {
    const beats = healthyBeats(5, 2, 1795315000);
    beats.push({ step: 6, ts: 1795315011, msg: 'beat', phase: 'step_start' });
    const r = await analyzeDir(makeRun({ heartbeats: { 0: beats } }));
    expect(r.verdict).toBe('incomplete');
    expect(r.stall).toBeNull();
    expect(r.lastPosition).toMatchObject({ step: 6, where: 'in-step' });
  });

  it('live: a clock past the threshold makes it a hang', () => {
    const ev = new Evidence();
    const beats = healthyBeats(5, 2, 0);
    beats.push({ step: 6, ts: 11, msg: 'beat', phase: 'step_start' });
    for (const b of beats)
      ev.addEvent({
        kind: 'beat',
        rank: 0,
        extra: {},
        ...b,
        loss: typeof b.loss === 'number' ? b.loss : undefined,
      });
    expect(ev.result({ nowS: 12, processAlive: true }).verdict).toBe('incomplete');
    expect(ev.result({ nowS: 40, processAlive: true })).toMatchObject({
      verdict: 'hang',
      stall: { step: 6, where: 'in-step' },
    });
  });

  it('multi-rank: rank 1 stalls in-step while rank 0 waits → rank 1 named', async () => {
    const r = await analyzeDir(makeRun({ heartbeats: rank1StallsInStep4() }));
    expect(r.verdict).toBe('hang');
    expect(r.ranks).toEqual([0, 1]);
    expect(r.stall).toMatchObject({ rank: 1, step: 4, where: 'in-step' });
  });

  it('a hang stopped by SIGINT, then SIGKILL while ranks still printed their KeyboardInterrupt: still a hang', async () => {
    // as at 512 demo ranks: the stop's SIGKILL cut tracebacks before their exception line (one frame
    // printed, or the hook's handler frame), and those halves read as a crash of UnknownError
    const frame = (rank: number) => [
      `[rank${rank}]:Traceback (most recent call last):`,
      `[rank${rank}]:  File "/r/nsa_demo_trainer.py", line 50, in <module>`,
      `[rank${rank}]:    main(sys.argv[1:], *many)`,
    ];
    const stopped = (stdout: string) =>
      analyzeDir(makeRun({ heartbeats: rank1StallsInStep4(), 'stdout.log': stdout, exit_code: '137\n' }));
    const cut = [
      ...frame(0),
      `[rank0]:  File "/r/.nsa-dbg-py/sitecustomize.py", line 249, in handler`,
      '[rank0]:    prev(sig, frame)',
      ...frame(1),
      '',
    ].join('\n');
    const r = await stopped(cut);
    expect(r.verdict).toBe('hang');
    expect(r.stall).toMatchObject({ rank: 1, step: 4, where: 'in-step' });
    // a rank's own exception, whole, is still a crash of its own
    const raised = await stopped(`${cut}${[...frame(1), '[rank1]:ValueError: boom', ''].join('\n')}`);
    expect(raised.verdict).toBe('crash');
  });

  it('final metrics and exit 0 → pass; HALT manual stop → stopped', async () => {
    const metrics = '{\n  "steps": 3,\n  "loss_first": 5.5,\n  "loss_last": 5.4\n}\n';
    const pass = await verdictOf(`${stepLines(3)}${metrics}== exit 0\n`);
    expect(pass.verdict).toBe('pass');
    expect(pass.completed).toBe(true);
    const stopped = await verdictOf(
      `${stepLines(2)}[train] HALT file detected — stopping gracefully.\n${metrics}`,
      {
        '.HALT': 'halt: manual_stop',
      },
    );
    expect(stopped.verdict).toBe('stopped');
  });

  it('no evidence at all is unusable input', async () => {
    await expect(analyzeDir(makeRun({ 'notes.txt': 'hi' }))).rejects.toThrow(/no run evidence/);
    await expect(analyzeDir('/nonexistent/run')).rejects.toThrow(/not a directory/);
  });
});
