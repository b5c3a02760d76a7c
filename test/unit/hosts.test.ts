/**
 * The pieces of a `--hosts` run: the host list, each host's copy of the run (paths moved to its run
 * dir), its node script, and the follower that mirrors each host and merges their output, run on
 * real directories of this machine standing in for the hosts' run dirs (LocalTarget is the real
 * target: an SSH host differs only in how bytes travel, which test/integration/hosts-runs covers).
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type HostsSettings, hostNodeScript, hostSpec, parseHostList } from '../../src/hosts/hosts.js';
import { HostsFollower } from '../../src/hosts/hosts-follower.js';
import { hostsLayout } from '../../src/ingest/run-files.js';
import type { RunSpec } from '../../src/runs/launcher.js';
import { LiveModel } from '../../src/session/live-model.js';
import { LocalTarget } from '../../src/targets/local.js';
import { waitUntil } from '../helpers/wait.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'nsa-hosts-'));
  dirs.push(d);
  return d;
}

const settings: HostsSettings = {
  hosts: [
    { alias: 'gpu-a', runsRoot: '/home/u/.nsa-dbg/runs', cwd: '/home/u' },
    { alias: 'ops@gpu-b:2222', runsRoot: '/scratch/runs', cwd: '/scratch' },
  ],
  rdzvEndpoint: '10.0.0.7:29500',
};

const spec: RunSpec = {
  runId: '20261122-221000-ddp-ab12',
  runDir: '/local/runs/20261122-221000-ddp-ab12',
  argv: [
    'python3',
    '-m',
    'torch.distributed.run',
    '--nproc_per_node',
    '2',
    '--log_dir',
    '/local/runs/20261122-221000-ddp-ab12/torchrun-logs',
    'train.py',
  ],
  env: { TORCH_NCCL_DEBUG_INFO_TEMP_FILE: '/local/runs/20261122-221000-ddp-ab12/nccl_trace_', A: 'b c' },
  cwd: '/local',
  lane: 'ddp',
  outDir: '/local/runs/20261122-221000-ddp-ab12',
  createdAt: '2026-11-22T22:10:00.000Z',
  launcher: { kind: 'hosts', ...settings },
  torchrun: { nprocPerNode: 2, commandWords: 3 },
};

describe('host list', () => {
  it('takes two or more distinct hosts', () => {
    expect(parseHostList('a, b,c')).toEqual(['a', 'b', 'c']);
    expect(() => parseHostList('a')).toThrow(/two or more/);
    expect(() => parseHostList('a,a')).toThrow(/a is given twice/);
    // the name goes into the node records (JSON) and the node script as it is
    expect(() => parseHostList('a,b"c')).toThrow(/b"c is not a host name/);
  });
});

describe('each host’s copy of the run', () => {
  it('moves the cell’s paths to the host’s run dir and runs there', () => {
    const b = hostSpec(spec, settings, 1);
    expect(b.runDir).toBe('/scratch/runs/20261122-221000-ddp-ab12-ops@gpu-b_2222');
    // its own id, as its dir is named: tmux sessions and listings on a shared box stay apart
    expect(b.runId).toBe('20261122-221000-ddp-ab12-ops@gpu-b_2222');
    expect(b.outDir).toBe(b.runDir);
    expect(b.cwd).toBe('/scratch');
    expect(b.argv[6]).toBe(`${b.runDir}/torchrun-logs`);
    expect(b.env.TORCH_NCCL_DEBUG_INFO_TEMP_FILE).toBe(`${b.runDir}/nccl_trace_`);
    expect(b.env.A).toBe('b c');
    // the host's own command.json is one detached agent's run: no hosts in it, torchrun's kept
    expect(b.launcher).toEqual({ kind: 'detached' });
    expect(b.torchrun).toEqual({ nprocPerNode: 2, commandWords: 3 });
    expect(b.layout).toEqual({});
  });

  it('its node script records where it runs and meets the others at the first host', () => {
    const b = hostSpec(spec, settings, 1);
    const script = hostNodeScript(spec, settings, 1);
    expect(script).toContain('task=1\n');
    expect(script).toContain('node=ops@gpu-b:2222\n');
    expect(script).toContain(
      `exec python3 -m torch.distributed.run --nnodes 2 --rdzv_backend c10d --rdzv_endpoint 10.0.0.7:29500 --rdzv_id ${spec.runId} --nproc_per_node 2`,
    );
    expect(script).toContain(`>> ${b.runDir}/nodes.jsonl`);
  });
});

describe('HostsFollower', () => {
  it('mirrors each host byte for byte, merges output line by line with the host’s label, ends when all agents have', async () => {
    const cell = tmp();
    const [ha, hb] = [tmp(), tmp()];
    const local = new LocalTarget();
    const seen: string[] = [];
    const f = new HostsFollower(
      local,
      cell,
      [
        { entry: settings.hosts[0]!, target: local, runDir: ha },
        { entry: settings.hosts[1]!, target: local, runDir: hb },
      ],
      (name) => seen.push(name),
    );
    writeFileSync(join(ha, 'stdout.log'), 'step 0001 | loss 1.0\n[default1]:half');
    writeFileSync(join(hb, 'stdout.log'), '[default0]:hello from b\n');
    await f.start();
    await waitUntil(() => readIf(join(cell, 'stdout.log')).includes('hello from b'), { what: 'b merged' });
    // a line split across writes is merged once whole, with its label once
    appendFileSync(join(ha, 'stdout.log'), ' a line\n');
    await waitUntil(() => readIf(join(cell, 'stdout.log')).includes('half a line'), { what: 'a merged' });
    writeFileSync(join(ha, 'exit_code'), '0\n');
    appendFileSync(join(hb, 'stdout.log'), 'no newline at the end');
    await waitUntil(() => seen.includes('hosts/gpu-a/exit_code'), { what: "a's exit seen" });
    expect(readIf(join(cell, 'exit_code'))).toBe(''); // b's agent is still running
    writeFileSync(join(hb, 'exit_code'), '1\n');
    await waitUntil(() => readIf(join(cell, 'exit_code')) === '1\n', { what: 'the run’s exit' });
    await f.stop();
    const merged = readFileSync(join(cell, 'stdout.log'), 'utf8').split('\n');
    expect(merged).toContain('0: step 0001 | loss 1.0');
    expect(merged).toContain('0: [default1]:half a line');
    expect(merged).toContain('1: [default0]:hello from b');
    // the last partial line is merged at the stop
    expect(merged).toContain('1: no newline at the end');
    const mirrorB = join(cell, 'hosts', 'ops@gpu-b_2222');
    expect(readFileSync(join(mirrorB, 'stdout.log')).equals(readFileSync(join(hb, 'stdout.log')))).toBe(true);
    expect(seen).toContain('hosts/ops@gpu-b_2222/stdout.log');
    // the merged files reach the engine from the top of the cell, like any run's
    expect(seen).toContain('stdout.log');
    expect(seen).toContain('exit_code');
  });
});

describe('HostsFollower picked up again (attach after nsa-dbg was killed)', () => {
  it('reads what the cell holds, merges the lines that were mirrored but never merged, and resumes each mirror: the same merged output, each line once', async () => {
    const cell = tmp();
    const [ha, hb] = [tmp(), tmp()];
    const local = new LocalTarget();
    const hosts = [
      { entry: settings.hosts[0]!, target: local, runDir: ha },
      { entry: settings.hosts[1]!, target: local, runDir: hb },
    ];
    const mirrorA = join(cell, 'hosts', 'gpu-a');
    writeFileSync(join(ha, 'stdout.log'), 'l1\nl2\npart');
    writeFileSync(join(hb, 'stdout.log'), 'b1\n');
    writeFileSync(join(hb, 'heartbeat_rank2.jsonl'), '{"step": 1}\n');
    const first = new HostsFollower(local, cell, hosts, () => {});
    await first.start();
    await waitUntil(
      () =>
        /0: l2\n/.test(readIf(join(cell, 'stdout.log'))) &&
        readIf(join(cell, 'stdout.log')).includes('1: b1'),
      {
        what: 'merged',
      },
    );
    await waitUntil(() => readIf(join(mirrorA, 'stdout.log')) === 'l1\nl2\npart', { what: 'a mirrored' });
    // killed: the agents go on. Host a's next lines reached its mirror but were never merged (the
    // process died between the two); host b writes on while no one follows
    await first.stop();
    appendFileSync(join(ha, 'stdout.log'), 'ial\nl3\n');
    appendFileSync(join(mirrorA, 'stdout.log'), 'ial\nl3\n');
    appendFileSync(join(hb, 'stdout.log'), 'b2\n');

    const seen = new Map<string, string>();
    const again = new HostsFollower(local, cell, hosts, (name, chunk) =>
      seen.set(name, (seen.get(name) ?? '') + chunk.toString()),
    );
    await again.start();
    await waitUntil(() => readIf(join(cell, 'stdout.log')).includes('1: b2'), { what: 'b resumed' });
    appendFileSync(join(ha, 'stdout.log'), 'l4\n');
    writeFileSync(join(ha, 'exit_code'), '0\n');
    writeFileSync(join(hb, 'exit_code'), '0\n');
    await waitUntil(() => readIf(join(cell, 'exit_code')) === '0\n', { what: 'the run’s exit' });
    await again.stop();
    const merged = readFileSync(join(cell, 'stdout.log'), 'utf8').split('\n').filter(Boolean);
    expect(merged.filter((l) => l.startsWith('0: '))).toEqual([
      '0: l1',
      '0: l2',
      '0: partial',
      '0: l3',
      '0: l4',
    ]);
    expect(merged.filter((l) => l.startsWith('1: '))).toEqual(['1: b1', '1: b2']);
    // the engine got each host's files whole: what the cell held, then what the mirror brought
    expect(seen.get('hosts/gpu-a/stdout.log')).toBe('l1\nl2\npartial\nl3\nl4\n');
    expect(seen.get('hosts/ops@gpu-b_2222/heartbeat_rank2.jsonl')).toBe('{"step": 1}\n');
    expect(readFileSync(join(mirrorA, 'stdout.log'), 'utf8')).toBe(
      readFileSync(join(ha, 'stdout.log'), 'utf8'),
    );
  });
});

describe('LiveModel of a --hosts cell', () => {
  it('two hosts’ dumps of the same second are two dumps; a host’s own exit is not the run’s', () => {
    const m = new LiveModel({ layout: hostsLayout(2) });
    const dump = (who: string) =>
      `Signal 10 at 2026-11-22T22:10:00Z\n\n--- Thread: MainThread (1) ---\n  File "${who}.py", line 3, in f\n    x()\n`;
    m.onFileChunk('hosts/a/stackdump_1795315501.txt', Buffer.from(dump('a')), 0);
    m.onFileChunk('hosts/b/stackdump_1795315501.txt', Buffer.from(dump('b')), 0);
    m.onFileChunk('hosts/b/exit_code', Buffer.from('1\n'), 0);
    m.finish();
    const files = m.evidence.dumpEvents().map((d) => d.file);
    expect(files.sort()).toEqual(['hosts/a/stackdump_1795315501.txt', 'hosts/b/stackdump_1795315501.txt']);
    expect(m.result({ nowMs: 0, processAlive: false }).exitCode ?? null).toBeNull();
  });

  it('each host’s Flight Recorder dump, mirrored under hosts/<alias>/, is read with the others', () => {
    // the real 2 × H200 dumps (test/fixtures/h200x2-nccl/5-fr-live), as if rank 0 ran on host a
    // and rank 1 on host b: each host's ranks write into that host's own run dir
    const fr = join(import.meta.dirname, '..', 'fixtures', 'h200x2-nccl', '5-fr-live');
    const m = new LiveModel({ layout: hostsLayout(1) });
    m.onFileChunk('hosts/a/nccl_trace_rank_0', readFileSync(join(fr, 'nccl_trace_rank_0')), 0);
    m.onFileChunk('hosts/b/nccl_trace_rank_1', readFileSync(join(fr, 'nccl_trace_rank_1')), 0);
    m.finish();
    expect(m.result({ nowMs: 0, processAlive: false }).flightRecorder).toEqual([
      expect.objectContaining({ ranks: [1], op: 'nccl:all_reduce', seq: 6, waiting: [0] }),
    ]);
  });
});

function readIf(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
