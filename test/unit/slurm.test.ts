/**
 * The Slurm pieces that need no cluster: the batch and node scripts (run through a real sh with
 * fake srun/scontrol where it matters), the job-state parsers of squeue/scontrol/sacct output, the
 * node map, and srun-labelled torchrun output resolved to global ranks.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NodeMap, parseNodeLine } from '../../src/ingest/node-map.js';
import { StdoutParser } from '../../src/ingest/stdout-parser.js';
import { nodeScript } from '../../src/runs/agent-script.js';
import type { RunSpec } from '../../src/runs/launcher.js';
import {
  jobEnded,
  parseSacct,
  parseSbatchParsable,
  parseScontrol,
  parseSqueue,
} from '../../src/slurm/job.js';
import { SLURM_PLACE, type SlurmSettings, sbatchScript } from '../../src/slurm/sbatch.js';
import { exitCodeOfJob } from '../../src/slurm/slurm-run.js';

const work = mkdtempSync(join(tmpdir(), 'nsa-slurm-unit-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const settings: SlurmSettings = {
  nodes: 2,
  partition: 'gpu',
  time: '1:00:00',
  sbatchArgs: ['--account=ml'],
  rdzvPort: 29611,
};

const spec = (runDir: string): RunSpec => ({
  runId: '20261122-010203-ddp-abcd',
  runDir,
  argv: [
    'python3',
    '-m',
    'torch.distributed.run',
    '--nproc_per_node',
    '2',
    '--log_dir',
    `${runDir}/torchrun-logs`,
    'train.py',
    "it's",
  ],
  env: { NCCL_DEBUG: 'INFO', ODD: '$(touch pwned) `x`' },
  cwd: '/tmp',
  lane: 'ddp',
  outDir: runDir,
  createdAt: '2026-11-22T01:02:03.000Z',
  launcher: { kind: 'slurm', ...settings },
  torchrun: { nprocPerNode: 2, commandWords: 3 },
});

describe('batch script', () => {
  it('has the #SBATCH lines, the rendezvous on the first node, srun --label and the exit status', () => {
    const s = sbatchScript(spec('/runs/x'), settings);
    expect(s).toMatch(
      /^#!\/bin\/bash\n#SBATCH --job-name=nsa-dbg-ddp\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n/,
    );
    expect(s).toContain('#SBATCH --output=/runs/x/stdout.log');
    expect(s).toContain('#SBATCH --partition=gpu');
    expect(s).toContain('#SBATCH --time=1:00:00');
    expect(s).toContain('head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)');
    expect(s).toContain('export NSA_DBG_RDZV="$head:29611"');
    expect(s).toContain('srun --label --kill-on-bad-exit=0 sh /runs/x/node.sh');
    expect(s).toContain("export ODD='$(touch pwned) `x`'");
  });

  it('runs: a fake srun and scontrol, the node script execs the torchrun line with the rendezvous flags', () => {
    const dir = join(work, 'run');
    const bin = join(work, 'bin');
    execFileSync('mkdir', ['-p', dir, bin]);
    const fake = (name: string, body: string) => {
      writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(bin, name), 0o755);
    };
    fake('scontrol', 'echo node-a; echo node-b');
    // srun: run the task script as task 1 on node-b
    fake('srun', 'shift 2; SLURM_PROCID=1 SLURMD_NODENAME=node-b SLURM_NTASKS=2 SLURM_JOB_ID=77 "$@"');
    // the "torchrun": print what it was given
    fake('python3', 'for a in "$@"; do printf "%s\\n" "$a"; done');
    const s = { ...spec(dir), cwd: work };
    writeFileSync(join(dir, 'node.sh'), nodeScript(s, SLURM_PLACE));
    writeFileSync(join(dir, 'job.sbatch'), sbatchScript(s, settings));
    const printed = execFileSync('bash', [join(dir, 'job.sbatch')], {
      env: { PATH: `${bin}:/usr/bin:/bin`, SLURM_JOB_NODELIST: 'node-[a-b]' },
    });
    // (sbatch would send this to stdout.log: #SBATCH --output)
    const argv = printed.toString('utf8').trim().split('\n');
    expect(argv).toEqual([
      '-m',
      'torch.distributed.run',
      '--nnodes',
      '2',
      '--rdzv_backend',
      'c10d',
      '--rdzv_endpoint',
      'node-a:29611',
      '--rdzv_id',
      '77',
      '--nproc_per_node',
      '2',
      '--log_dir',
      `${dir}/torchrun-logs`,
      'train.py',
      "it's",
    ]);
    expect(readFileSync(join(dir, 'exit_code'), 'utf8')).toBe('0\n');
    const agent = parseNodeLine(readFileSync(join(dir, 'nodes.jsonl'), 'utf8').split('\n')[0]!);
    expect(agent).toMatchObject({ task: 1, node: 'node-b' });
  });
});

describe('job state', () => {
  it('squeue: PENDING with its reason, RUNNING with its nodes', () => {
    expect(parseSqueue('41|PENDING|Resources|\n', '41')).toMatchObject({
      state: 'PENDING',
      reason: 'Resources',
      nodes: null,
    });
    expect(parseSqueue('41|RUNNING|None|gpu[01-02]\n', '41')).toMatchObject({
      state: 'RUNNING',
      reason: null,
      nodes: 'gpu[01-02]',
    });
    expect(parseSqueue('', '41')).toBeNull();
  });

  it('scontrol: the exit code and signal once ended; sacct likewise; an ended job by a signal is 128+N', () => {
    const line =
      'JobId=41 JobName=nsa-dbg-ddp UserId=root(0) JobState=CANCELLED Reason=None Dependency=(null) ExitCode=0:15 NodeList=box';
    const s = parseScontrol(line, '41')!;
    expect(s).toMatchObject({
      state: 'CANCELLED',
      exitCode: 0,
      signal: 15,
      nodes: 'box',
      source: 'scontrol',
    });
    expect(exitCodeOfJob(s)).toBe(143);
    expect(parseScontrol('JobId=412 JobState=RUNNING', '41')).toBeNull();
    const a = parseSacct('41|FAILED|1:0|gpu01|None\n', '41')!;
    expect(a).toMatchObject({ state: 'FAILED', exitCode: 1, signal: 0 });
    expect(exitCodeOfJob(a)).toBe(1);
    expect(parseSacct('41|CANCELLED by 0|0:0|None assigned|\n', '41')).toMatchObject({
      state: 'CANCELLED',
      nodes: null,
    });
    expect(jobEnded('COMPLETED')).toBe(true);
    expect(jobEnded('PENDING')).toBe(false);
    expect(parseSbatchParsable('1234;cluster\n')).toBe('1234');
    expect(parseSbatchParsable('sbatch: error: x')).toBeNull();
  });
});

describe('node map and srun-labelled output', () => {
  it('places ranks by the workers’ own records, whatever order the rendezvous gave', () => {
    const m = new NodeMap(2);
    // before the records: the usual layout
    expect(m.globalRank(1, 0)).toBe(2);
    m.push('{"task": 0, "node": "a", "pid": 10}\n{"task": 1, "node": "b", "pid": 20}\n');
    // task 1 joined first: it is group rank 0
    m.push('{"task": 1, "node": "b", "rank": 0, "localRank": 0, "pid": 21}\n{"task": 1, "node": "b", "ra');
    m.push(
      'nk": 1, "localRank": 1, "pid": 22}\nnot json\n{"task": 0, "node": "a", "rank": 2, "localRank": 0, "pid": 21}\n',
    );
    expect(m.skipped).toBe(1);
    expect(m.globalRank(1, 1)).toBe(1);
    expect(m.globalRank(0, 0)).toBe(2);
    expect(m.placeOf(2)).toEqual({ node: 'a', task: 0, localRank: 0 });
    // pid 21 is on both nodes: only its rank tells which
    expect(m.nodeOfPid(21)).toBeNull();
    expect(m.nodeOfPid(21, 2)).toBe('a');
    expect(m.nodeOfPid(22)).toBe('b');

    const p = new StdoutParser({ srunTasks: m });
    const ev = [
      ...p.push('1: [default1]:step 0003 | loss 2.5000 | lr 1.00e-02 | toks/s 100'),
      ...p.push('0: [default0]:Traceback (most recent call last):'),
      ...p.push('1: [default0]:step 0003 | loss 2.4000 | lr 1.00e-02 | toks/s 100'),
      ...p.push('0: [default0]:  File "t.py", line 3, in <module>'),
      ...p.push('0: [default0]:ValueError: bad batch'),
      ...p.push('0: INFO:torch.distributed.elastic.agent.server.api:[default] Starting worker group'),
      ...p.flush(),
    ];
    expect(ev.filter((e) => e.kind === 'step').map((e) => e.rank)).toEqual([1, 0]);
    const tb = ev.find((e) => e.kind === 'traceback');
    expect(tb).toMatchObject({ rank: 2, exception: 'ValueError' });
  });

  it('a worker that died before the watcher saw it is placed by its sibling on the same agent', () => {
    const m = new NodeMap(2);
    // task 1 joined first (group rank 0): only its local rank 0 was recorded before rank 1 died
    m.push('{"task": 1, "node": "b", "rank": 0, "localRank": 0, "pid": 21}\n');
    m.push('{"task": 0, "node": "a", "rank": 3, "localRank": 1, "pid": 31}\n');
    expect(m.globalRank(1, 1)).toBe(1);
    expect(m.placeOf(1)).toEqual({ node: 'b', task: 1, localRank: 1 });
    expect(m.globalRank(0, 0)).toBe(2);
    expect(m.placeOf(2)).toEqual({ node: 'a', task: 0, localRank: 0 });
    // a rank in no recorded agent's block stays unplaced
    expect(m.placeOf(4)).toBeUndefined();
  });

  it('torchrun stopping its workers: the exception objects Python dumps without stderr are read as such', () => {
    const m = new NodeMap(2);
    m.push(
      '{"task": 1, "node": "b", "rank": 3, "localRank": 1, "pid": 9}\n{"task": 0, "node": "a", "rank": 0, "localRank": 0, "pid": 7}\n',
    );
    const p = new StdoutParser({ srunTasks: m });
    const lines = [
      '1: [default1]:Traceback (most recent call last):',
      '1: [default1]:  File "/srv/ddp_ranks.py", line 110, in <module>',
      '1: [default1]:    main()',
      '1: [default1]:object address  : 0x7f1cd7085240',
      '1: [default1]:object refcount : 2',
      '1: [default1]:object type     : 0x9f12e0',
      '1: [default1]:object type name: KeyboardInterrupt',
      '1: [default1]:object repr     : KeyboardInterrupt()',
      '1: [default1]:lost sys.stderr',
      '1: [default1]:Exception ignored in atexit callback: <function shutdown at 0x7f53c0b3b9c0>',
      '1: [default1]:Traceback (most recent call last):',
      '1: [default1]:  File "/usr/lib/python3.11/logging/__init__.py", line 1087, in flush',
      '1: [default1]:    def flush(self):',
      '1: [default1]:',
      '1: [default1]:KeyboardInterrupt: ',
      '0: [default0]:Traceback (most recent call last):',
      '0: [default0]:object type name: RuntimeError',
      "0: [default0]:object repr     : RuntimeError('[./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:21404')",
      '0: [default0]:lost sys.stderr',
    ];
    const tbs = [...lines.flatMap((l) => p.push(l)), ...p.flush()].filter((e) => e.kind === 'traceback');
    expect(tbs.map((e) => [e.rank, e.kind === 'traceback' ? e.exception : ''])).toEqual([
      [3, 'KeyboardInterrupt'],
      [0, 'RuntimeError'],
      // the atexit one ends with the output (its message could go on)
      [3, 'KeyboardInterrupt'],
    ]);
    expect(tbs[1]).toMatchObject({ message: expect.stringContaining('Connection closed by peer') });
  });
});
