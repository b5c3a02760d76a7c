import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stackDiff } from '../../../src/analysis/stack-diff.js';
import { stallCulpritOf } from '../../../src/analysis/stall-culprit.js';
import type { DumpEvent } from '../../../src/ingest/events.js';
import { probeLine } from '../../../src/ingest/probes.js';
import { parseStackDump } from '../../../src/ingest/stackdump.js';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';
import { type Beat, makeRun } from './run-dir.js';

const HOSTS_STALL = join(import.meta.dirname, '..', '..', 'fixtures', 'torchrun-gloo', 'hosts-stall-attach');
const FREEZE = join(import.meta.dirname, '..', '..', 'fixtures', 'nsa-vibe-2xh200-nccl', 'freeze');
const T0 = 1795364230;
const iso = (t: number) => new Date(t * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

/** the last rank's dump from a real gloo run (ddp_ranks.py stall): asleep in its own backward */
const backwardDump = (t: number) =>
  [
    `Signal 10 at ${iso(t)}`,
    '',
    '--- Thread: MainThread (140544974139456) ---',
    '  File "/srv/ddp/ddp_ranks.py", line 110, in <module>',
    '    main()',
    '  File "/srv/ddp/ddp_ranks.py", line 96, in main',
    '    loss.backward()',
    '  File "/usr/lib/python3/dist-packages/torch/_tensor.py", line 488, in backward',
    '    torch.autograd.backward(',
    '  File "/usr/lib/python3/dist-packages/torch/autograd/__init__.py", line 197, in backward',
    '    Variable._execution_engine.run_backward(',
    '  File "/usr/lib/python3/dist-packages/torch/autograd/function.py", line 267, in apply',
    '    return user_fn(self, *args)',
    '  File "/srv/ddp/ddp_ranks.py", line 65, in backward',
    '    time.sleep(0.05)',
    '  File "/srv/ddp/ddp_ranks.py", line 52, in dump_stack',
    '    f.write("".join(traceback.format_stack(frames[th.ident])))',
    '',
  ].join('\n');

const allReduceDump = (t: number) =>
  [
    `Signal 10 at ${iso(t)}`,
    '',
    '--- Thread: MainThread (1) ---',
    '  File "/srv/ddp/train.py", line 80, in main',
    '    sync_flag(flag)',
    '  File "/srv/ddp/train.py", line 20, in sync_flag',
    '    dist.all_reduce(flag)',
    '  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 1536, in all_reduce',
    '    work.wait()',
    '  File "/srv/ddp/train.py", line 5, in dump_stack',
    '    f.write("".join(traceback.format_stack(frames[th.ident])))',
    '',
  ].join('\n');

/** three ranks: steps 1–2 done, all start step 3 at T0+3 and fall silent */
function beats(): Record<number, Beat[]> {
  const out: Record<number, Beat[]> = {};
  for (const rank of [0, 1, 2]) {
    const b: Beat[] = [{ step: 0, ts: T0, msg: 'boot', phase: 'start' }];
    for (const step of [1, 2, 3]) {
      b.push({ step, ts: T0 + step + rank * 0.01, msg: 'beat', phase: 'step_start' });
      if (step < 3) b.push({ step, ts: T0 + step + 0.5, msg: 'progress', loss: 0.1, toks: 800 });
    }
    out[rank] = b;
  }
  return out;
}

describe('root cause of a multi-rank hang', () => {
  it('the rank in its own code while the others gave no dump (blocked in the all_reduce), not the first silent one', async () => {
    const probes: string[] = [];
    const files: Record<string, string | Record<number, Beat[]>> = { heartbeats: beats() };
    for (const [i, t] of [T0 + 60, T0 + 62, T0 + 64, T0 + 90].entries()) {
      for (const rank of [0, 1, 2])
        probes.push(probeLine({ kind: 'proc', ts: t, rank, pid: 100 + rank, state: 'S', cpuPct: 0.5 }));
      for (const rank of [0, 1]) {
        if (i > 0) continue; // unanswered: no more signals until a dump shows up
        probes.push(
          probeLine({
            kind: 'dump-request',
            ts: t,
            rank,
            pid: 100 + rank,
            outcome: 'none-within-5s',
            purpose: 'suspect',
          }),
        );
      }
      const file = `stackdump_${t}.txt`;
      files[file] = backwardDump(t);
      probes.push(
        probeLine({
          kind: 'dump-request',
          ts: t,
          rank: 2,
          pid: 102,
          outcome: 'written',
          file,
          purpose: 'suspect',
        }),
      );
    }
    files['nsa-dbg-probes.jsonl'] = probes.join('');
    const r = await analyzeDir(makeRun(files));
    expect(r.verdict).toBe('hang');
    expect(r.stall).toMatchObject({ rank: 2, step: 3 });
    expect(r.stall!.rootCause).toMatchObject({ rank: 2, waiting: [0, 1] });
    expect(r.stall!.rootCause!.why).toMatch(/own code \(backward .*ddp_ranks.py:65\)/);
    // the summary reads as a sentence: "…; rank 2 is in its own code (backward …) while …"
    expect(r.summary).toMatch(/; rank 2 is in its own code \(backward /);
    expect(r.stackDiff!.noDump).toEqual([0, 1]);
    expect(r.stackDiff!.groups).toHaveLength(1);
    expect(r.stackDiff!.groups[0]).toMatchObject({ ranks: [2], odd: true, inCollective: false });
    expect(r.dumps.every((d) => d.rank === 2)).toBe(true);
  });

  it('a real 2 hosts × 2 ranks gloo hang: the odd stack out, though one waiting rank read as answered in Python', async () => {
    const r = await analyzeDir(HOSTS_STALL);
    expect(r.verdict).toBe('hang');
    expect(r.stall).toMatchObject({ rank: 3, step: 3, node: 'node-b', frame: { function: 'backward' } });
    expect(r.stall!.rootCause).toMatchObject({ rank: 3, waiting: [0, 1, 2] });
    expect(r.stall!.rootCause!.why).toMatch(
      /odd one out \(backward \/srv\/ddp\/ddp_ranks.py:68\): ranks 0–2 all wait in one place \(main /,
    );
    expect(r.summary).toMatch(/; rank 3 is the odd one out \(backward /);
  });

  it('the odd stack out needs one rank alone and at least two together', () => {
    const at = (fn: string) => ({ file: '/srv/t.py', line: 1, function: fn });
    const r = (rank: number, fn: string) => ({
      rank,
      step: 3,
      lastTs: 10,
      procState: 'S' as const,
      unanswered: false,
      stack: { inCollective: false, userTop: at(fn), place: fn },
    });
    // ranks 0 and 2 both look like their own code: the place the crowd shares tells
    expect(stallCulpritOf([r(0, 'main'), r(1, 'main'), r(2, 'main'), r(3, 'backward')])).toMatchObject({
      rank: 3,
      waiting: [0, 1, 2],
    });
    // one against one, or three places: nothing to tell
    expect(stallCulpritOf([r(0, 'main'), r(1, 'backward')])).toBeNull();
    expect(stallCulpritOf([r(0, 'main'), r(1, 'main'), r(2, 'fwd'), r(3, 'backward')])).toBeNull();
  });

  it('a stopped rank (T) is the culprit; then one behind; then the one that stopped beating first', () => {
    const base = { stack: null, unanswered: false, procState: 'S' as const };
    const r = (rank: number, step: number, lastTs: number, extra = {}) => ({
      ...base,
      rank,
      step,
      lastTs,
      ...extra,
    });
    expect(stallCulpritOf([r(0, 6, 10, { procState: 'R' }), r(1, 6, 10, { procState: 'T' })])).toMatchObject({
      rank: 1,
      why: expect.stringMatching(/stopped \(state T\)/),
      waiting: [0],
    });
    expect(stallCulpritOf([r(0, 7, 10), r(1, 6, 10), r(2, 7, 10)])).toMatchObject({
      rank: 1,
      waiting: [0, 2],
    });
    expect(stallCulpritOf([r(0, 7, 10), r(1, 7, 4), r(2, 7, 10)])!.why).toMatch(/stopped beating first, 6 s/);
    // nothing tells them apart: no culprit is invented
    expect(stallCulpritOf([r(0, 7, 10), r(1, 7, 10)])).toBeNull();
    expect(stallCulpritOf([r(0, 7, 10)])).toBeNull();
  });
});

describe('stack diff', () => {
  const parse = (text: string, file: string) => parseStackDump(text, file) as DumpEvent;

  it('groups ranks by identical main-thread stacks; the odd one out is the rank not in the collective', () => {
    const wait = parse(allReduceDump(T0), 'a.txt');
    const diff = stackDiff(
      new Map([
        [0, wait],
        [1, parse(allReduceDump(T0 + 1), 'b.txt')],
        [2, parse(backwardDump(T0 + 2), 'c.txt')],
        [3, parse(allReduceDump(T0 + 3), 'd.txt')],
      ]),
    );
    expect(diff.groups.map((g) => [g.ranks, g.inCollective, g.odd])).toEqual([
      [[0, 1, 3], true, false],
      [[2], false, true],
    ]);
    expect(diff.groups[0]!.userTop).toMatchObject({ function: 'sync_flag', line: 20 });
    // the handler's own frames are never part of the stack
    expect(diff.groups[1]!.frames.at(-1)).toMatchObject({ function: 'backward', line: 65 });
  });

  it('the real 2x H200 freeze: the frozen rank in its forward, the other at the step-end flag sync', () => {
    const dumps = new Map([
      [1, parse(readFileSync(join(FREEZE, 'stackdump_1795316714.txt'), 'utf8'), 'stackdump_1795316714.txt')],
      [0, parse(readFileSync(join(FREEZE, 'stackdump_1795316715.txt'), 'utf8'), 'stackdump_1795316715.txt')],
    ]);
    const diff = stackDiff(dumps);
    expect(diff.groups).toHaveLength(2);
    expect(diff.groups.map((g) => g.ranks)).toEqual([[0], [1]]);
    expect(diff.groups[0]!.userTop).toMatchObject({ function: 'main', line: 1271 });
    expect(diff.groups[1]!.userTop).toMatchObject({
      function: 'grouped_selection_attention_packed',
      line: 297,
    });
    // one stack each, neither in a collective frame: no odd one out is invented
    expect(diff.groups.some((g) => g.odd)).toBe(false);
  });
});
