import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Evidence } from '../../../src/analysis/evidence.js';
import { parseStackDump } from '../../../src/ingest/stackdump.js';

// A real SIGUSR1 dump of a CUDA process on an H100 (test/device/cuda_trainer.py, stalled at step 6):
// the signal landed inside torch.cuda.synchronize(), so the innermost frame is torch's and the
// frame to look at is its caller in the user's code.
const FILE = join(import.meta.dirname, '..', '..', 'fixtures', 'h100-cuda', 'stackdump_1795321260.txt');

describe('dump frames', () => {
  it('names the innermost frame and the innermost frame in the user’s code', () => {
    const d = parseStackDump(readFileSync(FILE, 'utf8'), 'stackdump_1795321260.txt')!;
    const ev = new Evidence();
    ev.addEvent(d);
    const [dump] = ev.result({ exitCode: 130 }).dumps;
    expect(dump!.signal).toBe(10);
    expect(dump!.mainThreadTop).toMatchObject({ function: 'synchronize', line: 1162 });
    expect(dump!.mainThreadTop!.file).toMatch(/site-packages\/torch\/cuda\/__init__\.py$/);
    expect(dump!.mainThreadUserTop).toMatchObject({ function: '_forward_prefill_sequential', line: 70 });
  });
});
