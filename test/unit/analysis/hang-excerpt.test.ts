/**
 * A hang on many ranks: the stack excerpt a cell and the report keep is the stalled rank's, not the
 * newest dump of any rank (a waiting rank's stack, inside the collective, says nothing of the cause).
 * The folder is a real capture: test/fixtures/trainers/ddp_ranks.py in DDP_MODE=stall under Debian's
 * torch 1.13 torchrun (2 gloo ranks), run as a bisection trial; the newest dump is rank 0's.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';

const RUN = join(import.meta.dirname, '..', '..', 'fixtures', 'torchrun-gloo', 'stall-2ranks');

describe('the stack excerpt of a many-rank hang', () => {
  it("is the stalled rank's newest dump, though a waiting rank's is newer", async () => {
    const r = await analyzeDir(RUN);
    expect(r.verdict).toBe('hang');
    expect(r.stall).toMatchObject({ rank: 1, step: 3 });
    // the newest dump of the run is rank 0's, waiting in the all_reduce under autograd
    const newest = r.dumps.reduce((a, b) => ((b.ts ?? 0) > (a.ts ?? 0) ? b : a));
    expect(newest).toMatchObject({ rank: 0, mainThreadTop: { function: 'backward', line: 197 } });
    const x = r.digest!.excerpts;
    // rank 1's newest: its trainer's own SIGUSR1 dump, written by its handler after the stack hook's
    // sample of the same request, in the same second (the file is named by the second)
    expect(x.dumpFile).toBe('stackdump_1795474711.txt');
    expect(r.dumps.find((d) => d.file === x.dumpFile)?.rank).toBe(1);
    expect(x.dumpTop[0]).toBe('/srv/ddp/ddp_ranks.py:68 in backward: time.sleep(0.05)');
  });
});
