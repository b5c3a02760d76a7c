/**
 * Live and offline read a run folder the same way: every run folder under test/fixtures/ and a set
 * of generated edge cases, pushed through the live model in random chunk sizes and random
 * interleavings of files (seeded), give exactly the result that `analyze` of the folder gives —
 * verdict, steps, ranks, stall, crash, NaN, hot frames, the charts' series, everything.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentsLayout, hostsLayout } from '../../../src/ingest/run-files.js';
import { analyzeDir, runSettings } from '../../../src/runs/analyze-dir.js';
import { LiveModel } from '../../../src/session/live-model.js';
import { mulberry32 } from '../../helpers/seeded-random.js';

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures');
const SEEDS = 40;
const tmp = mkdtempSync(join(tmpdir(), 'nsa-prop-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Folder = Map<string, Buffer>;

/** every fixture folder that holds a run: its files by path (subfolders too) */
function fixtureFolders(): Array<[string, Folder]> {
  const out: Array<[string, Folder]> = [];
  const walk = (dir: string) => {
    const names = readdirSync(dir);
    if (names.some((n) => n === 'stdout.log' || /^heartbeat/.test(n)))
      out.push([relative(FIXTURES, dir), readFolder(dir)]);
    for (const n of names) if (statSync(join(dir, n)).isDirectory()) walk(join(dir, n));
  };
  walk(FIXTURES);
  // captured logs and loose dumps, each read as a run's output
  for (const log of ['torchrun-gloo/crash-3ranks.log', 'synthetic/torchrun_ddp_crash.log'])
    out.push([log, new Map([['stdout.log', readFileSync(join(FIXTURES, log))]])]);
  out.push([
    'synthetic dumps',
    new Map(
      readdirSync(join(FIXTURES, 'synthetic'))
        .filter((n) => n.endsWith('.txt'))
        .map((n) => [n, readFileSync(join(FIXTURES, 'synthetic', n))]),
    ),
  ]);
  return out;
}

function readFolder(dir: string, prefix = ''): Folder {
  const files: Folder = new Map();
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) for (const [k, v] of readFolder(p, `${prefix}${n}/`)) files.set(k, v);
    else files.set(`${prefix}${n}`, readFileSync(p));
  }
  return files;
}

const b = (s: string) => Buffer.from(s, 'utf8');
const beat = (o: Record<string, unknown>) => `${JSON.stringify({ iso: 'x', pid: 7, ...o })}\n`;
const T0 = 1795300000;

/** the shapes the demo never writes */
function edgeCases(): Array<[string, Folder]> {
  const steps = (n: number, rank?: number) =>
    Array.from({ length: n }, (_, i) => {
      const r = rank === undefined ? {} : { rank };
      return (
        beat({ ts: T0 + 2 * i + 1, ...r, step: i + 1, msg: 'beat' }) +
        beat({
          ts: T0 + 2 * i + 2,
          ...r,
          step: i + 1,
          msg: 'progress',
          loss: 5 - i / 10,
          toks_per_s: 100 + i,
        })
      );
    }).join('');
  const handlerDump =
    'Signal 10 at 2026-11-22T22:10:00Z\n\n--- Thread: MainThread (1) ---\n' +
    '  File "train.py", line 90, in <module>\n    main()\n' +
    '  File "train.py", line 40, in train_step\n    loss.backward()\n' +
    '  File "train.py", line 12, in _on_usr1\n    write_stacks(f)\n' +
    '  File "train.py", line 20, in write_stacks\n    for tid, frame in sys._current_frames().items():\n';
  const big = `Signal 10 at 2026-11-22T22:10:01Z\n\n--- Thread: MainThread (1) ---\n${'  File "x.py", line 1, in f\n    g()\n'.repeat(20_000)}`;
  const labelled = [
    '0: [default0]:step 0001 | loss 5.1000 | lr 1.00e-05 | toks/s 50',
    '1: [default0]:[debug] step 2: input shape torch.Size([1, 512]), seq_len 512',
    '1: [default1]:Traceback (most recent call last):',
    '1: [default1]:  File "/w/train.py", line 7, in <module>',
    '1: [default1]:    shard = load(rank)',
    '1: [default1]:ValueError: bad shard on rank 3',
  ].join('\n');
  const nodes = [
    { task: 0, node: 'n0', pid: 1 },
    { task: 1, node: 'n1', pid: 2 },
    { task: 0, node: 'n0', pid: 11, rank: 2, localRank: 0 },
    { task: 0, node: 'n0', pid: 12, rank: 3, localRank: 1 },
    { task: 1, node: 'n1', pid: 21, rank: 0, localRank: 0 },
    { task: 1, node: 'n1', pid: 22, rank: 1, localRank: 1 },
  ]
    .map((r) => JSON.stringify(r))
    .join('\n');
  // nanoGPT's output, timed by nsa-dbg's clock: iteration 4 took 30 s (and said so), then it went silent
  const nano = [
    'tokens per iteration will be: 8,192',
    'Overriding config with config/train_shakespeare_char.py:',
    ...Array.from(
      { length: 8 },
      (_, i) =>
        `iter ${i}: loss ${(4.2 - i / 10).toFixed(4)}, time ${i === 4 ? '30012.50' : '65.20'}ms, mfu 1.23%`,
    ),
  ].map((l) => `${l}\n`);
  let off = 0;
  let t = T0;
  const clock: string[] = [];
  nano.forEach((l, i) => {
    off += Buffer.byteLength(l);
    t += i === 6 ? 30 : 0.07;
    clock.push(JSON.stringify({ f: 'stdout.log', o: off, t }));
  });
  const table = 'step,loss,lr,toks_per_s\n1,5.7,2e-05,66\n2,5.6,3e-05,80\n';
  clock.push(
    JSON.stringify({ f: 'out/training.csv', o: 24, t: T0 - 2 }),
    JSON.stringify({ f: 'out/training.csv', o: table.length, t: T0 - 1 }),
  );
  return [
    [
      'nanoGPT output with the arrival clock, a copied out_dir',
      new Map([
        ['command.json', b(JSON.stringify({ layout: { outCopy: 'out' } }))],
        ['stdout.log', b(nano.join(''))],
        ['nsa-dbg-clock.jsonl', b(`${clock.join('\n')}\n`)],
        ['out/training.csv', b(table)],
        ['out/heartbeat_rank0.jsonl', b(beat({ ts: T0, rank: 0, step: 0, msg: 'boot' }))],
        ['out/stdout.log', b('step 0009 | loss 1.0000 | lr 1.00e-05 | toks/s 1\n')],
      ]),
    ],
    ['records without rank', new Map([['heartbeat_rank3.jsonl', b(steps(5))]])],
    ['heartbeat.jsonl', new Map([['heartbeat.jsonl', b(steps(5))]])],
    [
      'training.csv only',
      new Map([
        ['heartbeat_rank0.jsonl', b(beat({ ts: T0, rank: 0, step: 0, msg: 'boot' }))],
        ['training.csv', b('step,loss,lr,toks_per_s\n1,5.7,2e-05,66\n2,5.6,3e-05,80\n3,5.5,4e-05,81\n')],
        ['exit_code', b('0\n')],
      ]),
    ],
    [
      'nvsmi, CRLF output, a partial last line, a NaN',
      new Map([
        ['nvsmi_poll.csv', readFileSync(join(FIXTURES, 'nsa-vibe-h200', 'nvsmi_poll.csv'))],
        ['heartbeat_rank0.jsonl', b(steps(3, 0))],
        [
          'stdout.log',
          b(
            'step 0001 | loss 5.0000 | lr 1.00e-05 | toks/s 100\r\nstep 0002 | loss 4.9000 | lr 1.00e-05 | toks/s 101\r\n' +
              '[train][FATAL] non-finite loss at step 3\r\nstep 0003 | loss nan | lr 1.00e-05 | toks/s 99',
          ),
        ],
      ]),
    ],
    [
      'a dump past the cap, a handler that calls a helper',
      new Map([
        ['heartbeat_rank0.jsonl', b(steps(4, 0))],
        ['stackdump_1795315501.txt', b(handlerDump)],
        ['stackdump_1795315502.txt', b(big)],
        ['stdout.log', b('step 0001 | loss 5.0000 | lr 1.00e-05 | toks/s 100\n')],
      ]),
    ],
    [
      'srun-labelled output placed by node records',
      new Map([
        ['command.json', b(JSON.stringify({ layout: agentsLayout(2) }))],
        ['nodes.jsonl', b(`${nodes}\n`)],
        ['stdout.log', b(`${labelled}\n`)],
        ['exit_code', b('1\n')],
      ]),
    ],
    [
      'hosts subfolders',
      new Map([
        ['command.json', b(JSON.stringify({ layout: hostsLayout(2) }))],
        ['nodes.jsonl', b(`${nodes}\n`)],
        ['stdout.log', b(`${labelled}\n`)],
        ['hosts/n0/heartbeat_rank2.jsonl', b(steps(2, 2))],
        ['hosts/n0/heartbeat_rank3.jsonl', b(steps(2, 3))],
        ['hosts/n0/exit_code', b('0\n')],
        ['hosts/n1/stdout.log', b('1: not read under hosts/\n')],
        ['hosts/n1/exit_code', b('1\n')],
        ['hosts/n1/stackdump_1795315501.txt', b(handlerDump)],
        ['hosts/n0/stackdump_1795315501.txt', b(handlerDump.replace('train_step', 'other_step'))],
      ]),
    ],
    [
      'a stalled rank with probes, a file after the output ended',
      new Map([
        ['heartbeat_rank0.jsonl', b(steps(6, 0))],
        ['heartbeat_rank1.jsonl', b(steps(2, 1) + beat({ ts: T0 + 5, rank: 1, step: 3, msg: 'beat' }))],
        [
          'nsa-dbg-probes.jsonl',
          b(
            [30, 31, 32]
              .map((d) =>
                JSON.stringify({ kind: 'proc', ts: T0 + d, rank: 1, pid: 7, state: 'T', cpuPct: 0 }),
              )
              .join('\n'),
          ),
        ],
        ['stdout.log', b('step 0001 | loss 5.0000 | lr 1.00e-05 | toks/s 100\n')],
        ['exit_code', b('130\n')],
      ]),
    ],
  ];
}

function writeFolder(name: string, files: Folder): string {
  const dir = join(tmp, name.replace(/[^\w-]+/g, '_'));
  for (const [p, data] of files) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), data);
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

async function live(dir: string, files: Folder, seed: number): Promise<unknown> {
  const rnd = mulberry32(seed);
  const s = await runSettings(dir);
  const m = new LiveModel({
    ...(s.stepRegex ? { stepRegex: s.stepRegex.source } : {}),
    ...s.evidence,
    layout: s.layout,
    probing: false,
    timed: files.has('nsa-dbg-clock.jsonl'),
  });
  const cursors = [...files].map(([path, data]) => ({ path, data, off: 0 }));
  for (;;) {
    const open = cursors.filter((c) => c.off < c.data.length);
    if (open.length === 0) break;
    const c = open[Math.floor(rnd() * open.length)]!;
    const n = 1 + Math.floor(rnd() * (rnd() < 0.3 ? 7 : 5000));
    m.onFileChunk(c.path, c.data.subarray(c.off, c.off + n), 0);
    c.off += n;
  }
  m.finish();
  return m.result({ nowMs: 0, processAlive: false });
}

describe('live and offline read a run folder alike', () => {
  for (const [name, files] of [...fixtureFolders(), ...edgeCases()]) {
    it(`${name}: every seed gives the offline result`, async () => {
      const dir = writeFolder(name, files);
      const offline = await analyzeDir(dir);
      for (let seed = 1; seed <= SEEDS; seed++)
        expect(await live(dir, files, seed), `seed ${seed}`).toEqual(offline);
    });
  }
});

describe('what live reading used to get wrong', () => {
  const cases = new Map(edgeCases());
  const both = async (name: string) => {
    const files = cases.get(name)!;
    const dir = writeFolder(`${name}-explicit`, files);
    return [await analyzeDir(dir), (await live(dir, files, 7)) as Awaited<ReturnType<typeof analyzeDir>>];
  };

  it('heartbeat_rank3.jsonl whose records carry no rank: rank 3', async () => {
    for (const r of await both('records without rank')) {
      expect(r.ranks).toEqual([3]);
      expect(r.stepsReached).toBe(5);
    }
  });

  it('progress only in training.csv: 3 steps', async () => {
    for (const r of await both('training.csv only')) {
      expect(r.stepsReached).toBe(3);
      expect(r.verdict).toBe('pass');
      expect(r.digest?.series.loss).toEqual([]);
    }
  });

  it('a single-rank heartbeat.jsonl: 5 steps of rank 0', async () => {
    for (const r of await both('heartbeat.jsonl')) {
      expect(r.ranks).toEqual([0]);
      expect(r.stepsReached).toBe(5);
    }
  });

  it('a handler that calls a helper: the interrupted frame, neither the handler nor the helper', async () => {
    for (const r of await both('a dump past the cap, a handler that calls a helper')) {
      const d = r.dumps.find((x) => x.file === 'stackdump_1795315501.txt')!;
      expect(d.mainThreadTop?.function).toBe('train_step');
      expect(r.digest?.excerpts.dumpFile).toBe('stackdump_1795315502.txt'); // the newest, cut at the cap
    }
  });

  it('labelled output: [defaultN] of an agent is the rank its node records say', async () => {
    for (const r of await both('srun-labelled output placed by node records')) {
      expect(r.crash?.rank).toBe(1);
      expect(r.crash?.node).toBe('n1');
      expect(r.crash?.exception).toBe('ValueError');
    }
  });
});

describe('progress from output and the CSV table, timed by the clock', () => {
  it('nanoGPT: steps, toks/s from its banner, its own step time, a slow step; the out/ copy read, its stdout.log not', async () => {
    const files = new Map(edgeCases()).get('nanoGPT output with the arrival clock, a copied out_dir')!;
    const dir = writeFolder('nano-explicit', files);
    for (const r of [
      await analyzeDir(dir),
      (await live(dir, files, 3)) as Awaited<ReturnType<typeof analyzeDir>>,
    ]) {
      expect(r.stepsReached).toBe(7);
      expect(r.throughput?.medianToksPerS).toBeCloseTo(8192 / 0.0652, 0);
      expect(r.slowSteps.map((x) => x.step)).toEqual([4]);
      // the 30 s silence before iteration 4's line: past the threshold learned from 65 ms steps
      expect(r.pastStalls.map((p) => [p.step, p.where])).toEqual([[4, 'in-step']]);
      expect(r.digest?.series.loss.at(-1)).toEqual([7, 3.5]);
    }
  });
});
