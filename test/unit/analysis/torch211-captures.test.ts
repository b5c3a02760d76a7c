/**
 * What a current torch (2.11) prints when workers fail, read from real captures
 * (test/fixtures/torch211/README.md): the worker's own exception and rank, never torchrun's
 * ChildFailedError, whatever prefixes torchrun and torch put in front of the lines.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { judge } from '../../../src/analysis/acceptance.js';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'torch211');

describe('worker failures on torch 2.11', () => {
  it('gloo, --tee 3 ([defaultN]:[rankN]: on every line): rank 2 raised ValueError in bad_batch', async () => {
    const r = await analyzeDir(join(FIX, 'gloo-tee'));
    expect(r.verdict).toBe('crash');
    expect(r.crash).toMatchObject({ rank: 2, step: 3, exception: 'ValueError', basis: 'first-exception' });
    expect(r.crash?.frame?.function).toBe('bad_batch');
    expect(r.crash?.consequences?.map((c) => c.rank)).toEqual([0, 1]);
  });

  it('gloo without --tee: the unprefixed traceback is the rank torchrun saw exit on its own', async () => {
    const r = await analyzeDir(join(FIX, 'gloo-plain'));
    expect(r.crash).toMatchObject({ rank: 2, exception: 'ValueError', torchrunRootCause: 2 });
    expect(r.crash?.frame?.function).toBe('bad_batch');
  });

  it("nsa-vibe's ddp-gloo lane at global batch 1: rank 1's reshape error in _shape_kv", async () => {
    const r = await analyzeDir(join(FIX, 'vibe-gloo'));
    expect(r.crash).toMatchObject({ rank: 1, step: 1, exception: 'RuntimeError' });
    expect(r.crash?.message).toMatch(/^cannot reshape tensor of 0 elements/);
    expect(r.crash?.frame?.function).toBe('_shape_kv');
  });

  it('NCCL with default DDP flags: DDP’s unused-parameters error on both ranks at step 2', async () => {
    const r = await analyzeDir(join(FIX, 'vibe-nccl-unused'));
    expect(r.crash).toMatchObject({ step: 2, exception: 'RuntimeError', ranks: [0, 1] });
    expect(r.crash?.message).toMatch(/^Expected to have finished reduction in the prior iteration/);
  });

  it("nsa-vibe's stock config: 3 of 3 steps from its own out_dir, though its output shows step 1", async () => {
    const r = await analyzeDir(join(FIX, 'vibe-stock'));
    expect(r.verdict).toBe('pass');
    expect(r.stepsReached).toBe(3);
    expect(r.digest?.platform.torch).toBe('2.11.0+cu130');
    expect(judge(r, { finiteLoss: true, noStall: true }, 3).go).toBe(true);
  });
});

describe("the launcher's own failure", () => {
  it('torchrun rejecting --tee 3 (Debian torch 1.13 on Python 3.11): the launcher failed, not training', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'nsa-tee3-'));
    const r = await analyzeDir(dir, { logs: [join(FIX, '..', 'torchrun-gloo', 'tee3-rejected.log')] });
    expect(r.verdict).toBe('crash');
    expect(r.crash).toMatchObject({ basis: 'launcher-error', exception: 'AttributeError' });
    expect(r.summary).toMatch(/^the launcher failed before any worker trained: AttributeError: 'NoneType'/);
    const j = judge(r, { finiteLoss: true, noStall: true });
    expect(j.reasons[0]).toMatch(/^the launcher failed before training: AttributeError/);
  });
});
