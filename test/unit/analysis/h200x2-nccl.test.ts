/**
 * nsa-vibe over real NCCL on two H200s under nsa-dbg (test/device/check-nccl-*.sh; provenance in
 * test/fixtures/h200x2-nccl/README.md): the run folders nsa-dbg left on the box, read again here.
 * On the box the live verdicts were compared with `analyze` of the same folders and agreed; these
 * tests keep the reader giving those answers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'h200x2-nccl');

describe('nsa-vibe on 2 × H200 over NCCL, the run folders nsa-dbg wrote', () => {
  it('static graph, 25 steps: pass, the heartbeats read from the out_dir nsa-dbg found in the config', async () => {
    const r = await analyzeDir(join(FIX, '1-pass'));
    expect(r).toMatchObject({ verdict: 'pass', stepsReached: 25, stall: null, crash: null });
    const cmd = JSON.parse(readFileSync(join(FIX, '1-pass', 'command.json'), 'utf8'));
    expect(cmd.outDir).toMatch(/artifacts\/dbg_nccl$/);
    expect(cmd.outDirFrom.from).toBe('config');
    expect(r.ranks).toEqual([0, 1]);
  });

  it("default DDP flags: the workers' unused-parameters RuntimeError at step 2, not ChildFailedError", async () => {
    const r = await analyzeDir(join(FIX, '2-unused'));
    expect(r.verdict).toBe('crash');
    expect(r.crash).toMatchObject({ step: 2, exception: 'RuntimeError', basis: 'first-exception' });
    expect(r.crash?.message).toMatch(/^Expected to have finished reduction in the prior iteration/);
    expect(r.crash?.frame).toMatchObject({ function: 'main', line: 1247 });
    expect([0, 1]).toContain(r.crash?.rank);
  });

  it('rank 1 SIGSTOPped 45 s inside a 60 s confirm window, then SIGCONT: slow, never a hang', async () => {
    const r = await analyzeDir(join(FIX, '3a-cont'));
    expect(r).toMatchObject({ verdict: 'slow', stepsReached: 10, stall: null });
    expect(r.suspects.map((s) => [s.rank, s.step, s.state])).toEqual([
      [0, 6, 'busy'],
      [1, 6, 'busy'],
    ]);
    // rank 0 answered through the stack hook at once; rank 1 once it ran again
    expect(r.dumpRequests.filter((q) => q.rank === 0).every((q) => q.outcome === 'faulthandler')).toBe(true);
  });

  it('rank 1 SIGSTOPped and never resumed: a hang on rank 1, stopped (T), rank 0 not the odd one out', async () => {
    const r = await analyzeDir(join(FIX, '3b-stopped'));
    expect(r.verdict).toBe('hang');
    expect(r.stall).toMatchObject({ rank: 1, step: 6, state: 'stuck', evidence: { procState: 'T' } });
    expect(r.stall?.rootCause).toMatchObject({ rank: 1, waiting: [0] });
    expect(r.dumpRequests.find((q) => q.rank === 0)?.outcome).toBe('faulthandler');
    expect(r.dumpRequests.find((q) => q.rank === 1)?.outcome).toBe('none-within-5s');
    // a stopped rank cannot answer and is not waiting: it is listed as stopped, not as blocked
    expect(r.stackDiff).toMatchObject({ noDump: [], stopped: [1] });
    expect(r.stackDiff?.groups.map((g) => [g.ranks, g.odd])).toEqual([[[0], false]]);
  });

  it('a real collective timeout: the Flight Recorder says rank 1 never entered all_reduce #6', async () => {
    const r = await analyzeDir(join(FIX, '4-fr'));
    expect(r.flightRecorder).toEqual([
      expect.objectContaining({ ranks: [1], op: 'nccl:all_reduce', seq: 6, pg: 'default_pg', waiting: [0] }),
    ]);
    expect(r.stall?.rootCause?.rank).toBe(1);
    // torch's own analyzer, run on the box after the run, says the same
    const frTrace = readFileSync(join(FIX, '4-fr', 'fr_trace.txt'), 'utf8');
    expect(frTrace).toContain('missing ranks: {1}');
    expect(frTrace).toContain('collective: nccl:all_reduce');
  });

  it('the same timeout under today’s nsa-dbg, live: rank 1 named, the Flight Recorder agrees, each rank’s last words at the stop', async () => {
    const r = await analyzeDir(join(FIX, '5-fr-live'));
    expect(r).toMatchObject({ verdict: 'hang', exitCode: 137 });
    expect(r.stall).toMatchObject({ rank: 1, step: 6, state: 'stuck', rootCause: { rank: 1, waiting: [0] } });
    expect(r.flightRecorder).toEqual([
      expect.objectContaining({ ranks: [1], op: 'nccl:all_reduce', seq: 6, waiting: [0] }),
    ]);
    expect(r.lastWords.map((w) => [w.rank, w.signal, w.mainThreadTop?.function, w.calledFrom?.line])).toEqual(
      [
        [0, 'SIGINT', 'synchronize', 25],
        [1, 'SIGINT', '<module>', undefined],
      ],
    );
    expect(r.summary).toContain(
      'rank 1 is in its own code (<module> /home/user/nsa-dbg/test/device/fr_timeout.py:23) while rank 0 waits in a collective',
    );
    // the verdict the run gave live, on the box, is the one analyze gives of its folder
    const live = JSON.parse(readFileSync(join(FIX, '5-fr-live', 'live-verdict.json'), 'utf8'));
    expect(live).toMatchObject({ verdict: r.verdict, stall: { rank: 1, step: 6 } });
  });

  it('the stock fp16 config (log_every 20): 3 of 3 steps from its own out_dir', async () => {
    const r = await analyzeDir(join(FIX, 'fp16'));
    expect(r).toMatchObject({ verdict: 'pass', stepsReached: 3 });
  });
});
