/**
 * Two runs that ended themselves under nsa-dbg on the lent 2 × H200 box (torch 2.11.0+cu130;
 * test/device/last-words-live.sh), read back from their folders: a gloo collective timeout, whose
 * culprit silence alone could not name, and an NCCL rank's crash, whose teardown snapshot holds
 * nvidia-smi's processes.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'torch211');

describe('last words of real torch 2.11 runs', () => {
  it('gloo’s timeout raises in the ranks that came (no abort): the rank that did not is named, with where it was', async () => {
    const r = await analyzeDir(join(FIX, 'lw-gloo-timeout'));
    expect(r.verdict).toBe('hang');
    expect(r.signatures.map((g) => g.name)).toContain('gloo-timeout');
    expect(r.stall).toMatchObject({ rank: 1, step: 3, rootCause: { rank: 1, waiting: [0, 2] } });
    expect(r.lastWords).toEqual([
      expect.objectContaining({
        rank: 1,
        signal: 'SIGTERM',
        fatal: false,
        mainThreadTop: expect.objectContaining({ function: 'save_checkpoint' }),
      }),
    ]);
    expect(r.summary).toMatch(
      /^hang at step 3 \(in-step\), rank 1; rank 1 never came to the collective that ranks 0 and 2 timed out in/,
    );
    expect(r.summary).toMatch(
      /rank 1 was in save_checkpoint \(last_words\.py:60\) when torchrun stopped it \(SIGTERM\)$/,
    );
  });

  it('an NCCL rank’s crash: the snapshot took nvidia-smi’s processes, and the summary says what the other rank still held', async () => {
    const r = await analyzeDir(join(FIX, 'lw-nccl-crash'));
    expect(r.verdict).toBe('crash');
    expect(r.crash).toMatchObject({ rank: 1, exception: 'ValueError' });
    expect(r.teardown?.gpuProcesses).toEqual([
      expect.objectContaining({ pid: 758, usedMiB: 1470 }),
      expect.objectContaining({ pid: 759, usedMiB: 986 }),
    ]);
    expect(r.summary).toContain(
      'when rank 1 crashed, rank 0 was in state R (running, 99% CPU, 1470 MiB on its GPU)',
    );
    expect(r.summary).toMatch(
      /rank 0 was in synchronize \(__init__\.py:1162\) from main \(lw_nccl\.py\.txt:27\) when torchrun stopped it \(SIGTERM\)$/,
    );
  });
});
