/**
 * nsa-dbg's stack hook, for real: src/stacks/sitecustomize.py in real Python processes (Debian's
 * python3), and its log read back by the stack-log reader: the header names the rank and pid, each
 * `# request` line starts one dump, `# in-python` says the main thread ran Python right after.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DumpEvent, WorkerEvent } from '../../../src/ingest/events.js';
import { StackLogReader } from '../../../src/ingest/stack-log.js';
import { waitUntil } from '../../helpers/wait.js';

const HOOK = join(import.meta.dirname, '..', '..', '..', 'src', 'stacks');
const work = mkdtempSync(join(tmpdir(), 'nsa-hook-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function read(path: string, name: string): { workers: WorkerEvent[]; dumps: Map<string, DumpEvent> } {
  const workers: WorkerEvent[] = [];
  const dumps = new Map<string, DumpEvent>();
  const r = new StackLogReader(
    name,
    (w) => workers.push(w),
    (d) => dumps.set(d.file, d),
  );
  for (const line of readFileSync(path, 'utf8').split('\n')) r.line(line);
  r.end();
  return { workers, dumps };
}

const env = (dir: string, extra: Record<string, string> = {}) => ({
  ...process.env,
  PYTHONPATH: HOOK,
  NSA_DBG_STACK_DIR: dir,
  NSA_DBG_STACK_SIGNAL: '12',
  ...extra,
});

describe('the stack hook in real Python processes', () => {
  it('a rank in Python and one in a long C call both answer at once; the C one with no in-python line', async () => {
    const dir = join(work, 'two');
    mkdirSync(dir);
    const script = [
      'import sys, time',
      'print("ready", flush=True)',
      'if sys.argv[1] == "py":',
      '    while True: time.sleep(0.01)',
      'else:',
      '    sum(range(10**11))',
    ].join('\n');
    const procs = ['py', 'c'].map((m, i) =>
      spawn('/usr/bin/python3', ['-c', script, m], { env: env(dir, { RANK: String(i) }), stdio: 'pipe' }),
    );
    try {
      await waitUntil(() => readdirSync(dir).length === 2, { what: 'two stack logs' });
      await new Promise((r) => setTimeout(r, 300));
      const t0 = Date.now() / 1000;
      for (const p of procs) {
        const log = readdirSync(dir).find((f) => f.includes(`_pid${p.pid}.`))!;
        writeFileSync(join(dir, log), `# request ${t0.toFixed(3)}\n`, { flag: 'a' });
        process.kill(p.pid!, 'SIGUSR2');
      }
      await waitUntil(
        () => readdirSync(dir).every((f) => /Current thread/.test(readFileSync(join(dir, f), 'utf8'))),
        {
          timeoutMs: 2000,
          what: 'both dumps within 2 s',
        },
      );
      await new Promise((r) => setTimeout(r, 1200));
      const byRank = new Map<number, { w: WorkerEvent; d: DumpEvent }>();
      for (const f of readdirSync(dir)) {
        const { workers, dumps } = read(join(dir, f), f);
        // one process, told once by its header, again when the hook armed its sample signal
        expect(workers.map((w) => [w.pid, w.sampleSignal])).toEqual([
          [workers[0]!.pid, undefined],
          [workers[0]!.pid, 23],
        ]);
        expect(dumps.size).toBe(1);
        byRank.set(workers[0]!.rank, { w: workers[0]!, d: [...dumps.values()][0]! });
      }
      const py = byRank.get(0)!;
      const c = byRank.get(1)!;
      expect(py.w.pid).toBe(procs[0]!.pid);
      expect(py.w.path).toBe(join(dir, `nsa-dbg-stacks_rank0_pid${procs[0]!.pid}.log`));
      expect(py.d.inPython).toBe(true);
      expect(c.d.inPython).toBeUndefined();
      const main = c.d.threads.find((t) => t.name === 'MainThread')!;
      expect(main.frames.at(-1)!.function).toBe('<module>');
      expect(py.d.ts).toBeCloseTo(t0, 2);
    } finally {
      for (const p of procs) p.kill('SIGKILL');
    }
  });

  it('a rank in Python that gets no core for 2 s after the signal (a loaded box): still read as in Python, timed from the watcher’s seen mark', async () => {
    const dir = join(work, 'stopped');
    mkdirSync(dir);
    const script = ['import sys', 'print("ready", flush=True)', 'n = 0', 'while True: n += 1'].join('\n');
    const p = spawn('/usr/bin/python3', ['-c', script], { env: env(dir, { RANK: '0' }), stdio: 'pipe' });
    try {
      const logOf = () => readdirSync(dir).find((f) => f.includes(`_pid${p.pid}.`));
      await waitUntil(
        () => logOf() !== undefined && /# marks seen/.test(readFileSync(join(dir, logOf()!), 'utf8')),
        {
          what: 'the hook registered, with its watcher',
        },
      );
      const log = join(dir, logOf()!);
      // stopped: the signal waits, as it waits for a core on a box with hundreds of busy ranks
      process.kill(p.pid!, 'SIGSTOP');
      const t0 = (Date.now() / 1000).toFixed(3);
      writeFileSync(log, `# request ${t0} ${t0}\n`, { flag: 'a' });
      process.kill(p.pid!, 'SIGUSR2');
      await new Promise((r) => setTimeout(r, 2000));
      process.kill(p.pid!, 'SIGCONT');
      await waitUntil(
        () => /# in-python/.test(readFileSync(log, 'utf8')) && /# seen/.test(readFileSync(log, 'utf8')),
        {
          what: 'both marks',
        },
      );
      const text = readFileSync(log, 'utf8');
      const seen = Number(/# seen (\S+)/.exec(text)![1]);
      expect(seen - Number(t0)).toBeGreaterThanOrEqual(1.9);
      const d = [...read(log, 'x.log').dumps.values()][0]!;
      expect(d.inPython).toBe(true);
      // the same log without the watcher's marks (an older hook) reads the late answer as native code
      const old = join(dir, 'old.log');
      writeFileSync(
        old,
        text
          .split('\n')
          .filter((l) => !/^# (seen|marks seen)/.test(l))
          .join('\n'),
      );
      expect([...read(old, 'x.log').dumps.values()][0]!.inPython).toBe(false);
    } finally {
      p.kill('SIGKILL');
    }
  });

  it('runs the sitecustomize that was there before it; under a launcher only ranks register, and a rank’s own child never', () => {
    const dir = join(work, 'chain');
    const theirs = join(work, 'theirs');
    mkdirSync(dir);
    mkdirSync(theirs);
    writeFileSync(join(theirs, 'sitecustomize.py'), 'import builtins\nbuiltins.THEIRS = 42\n');
    const py = (code: string, extra: Record<string, string>) =>
      spawnSync('/usr/bin/python3', ['-c', code], {
        env: { ...env(dir, extra), PYTHONPATH: `${HOOK}:${theirs}` },
        encoding: 'utf8',
      });
    // the user's sitecustomize still runs
    expect(py('import builtins; print(builtins.THEIRS)', {}).stdout.trim()).toBe('42');
    // a launcher (no RANK) does not register; its rank does; the rank's own child does not
    const child = 'import subprocess, sys; subprocess.run([sys.executable, "-c", "pass"])';
    py(child, { NSA_DBG_STACK_WORKERS: '1' });
    expect(readdirSync(dir).filter((f) => f.includes('stacks'))).toHaveLength(1); // the first call's
    py(child, { NSA_DBG_STACK_WORKERS: '1', RANK: '5' });
    const logs = readdirSync(dir).filter((f) => f.startsWith('nsa-dbg-stacks_rank5_'));
    expect(logs).toHaveLength(1);
    // turned off: nothing
    rmSync(dir, { recursive: true });
    mkdirSync(dir);
    py('pass', { NSA_DBG_STACK_SIGNAL: 'off' });
    expect(readdirSync(dir)).toEqual([]);
  });
});

/** each stack log's header in `dir`: [rank, rank_var, pid] */
function headers(dir: string): Array<[number, string | null, number]> {
  return (
    readdirSync(dir)
      .filter((f) => f.startsWith('nsa-dbg-stacks_'))
      .map((f) =>
        JSON.parse(readFileSync(join(dir, f), 'utf8').split('\n')[0]!.replace('# nsa-dbg stacks ', '')),
      )
      .map((h): [number, string | null, number] => [h.rank, h.rank_var, h.pid])
      // by rank, a guessed one first (never by pid: pids wrap)
      .sort((a, b) => a[0] - b[0] || Number(a[1] !== null) - Number(b[1] !== null))
  );
}

describe('the stack hook and launchers', () => {
  it('a real torchrun agent registers as no rank, even unannounced; its workers do, each with its own RANK', () => {
    const dir = join(work, 'torchrun');
    mkdirSync(dir);
    // each worker says who it is; the agent's pid is the one spawnSync started. One write per line:
    // under PYTHONUNBUFFERED=1 print() writes each argument and the newline separately, and the
    // two workers share the agent's stdout, so their words interleaved ("worker worker 81 82 0 1")
    const worker = join(work, 'who.py');
    writeFileSync(
      worker,
      'import os\nos.write(1, f"worker {os.getpid()} {os.environ[\'RANK\']}\\n".encode())\n',
    );
    const r = spawnSync(
      '/usr/bin/python3',
      [
        '-m',
        'torch.distributed.run',
        '--standalone',
        '--nproc_per_node',
        '2',
        '--redirects',
        '2',
        '--tee',
        '2',
        worker,
      ],
      // NSA_DBG_STACK_WORKERS=0: nsa-dbg did not know of the launcher (a user's script started it)
      { env: env(dir, { NSA_DBG_STACK_WORKERS: '0' }), encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    const workers = [...r.stdout.matchAll(/^worker (\d+) (\d+)$/gm)].map((m) => [
      Number(m[2]),
      'RANK',
      Number(m[1]),
    ]);
    expect(workers, r.stdout).toHaveLength(2);
    expect(headers(dir)).toEqual(workers.sort((a, b) => (a[0] as number) - (b[0] as number)));
    expect(headers(dir).map((h) => h[2])).not.toContain(r.pid);
  }, 90_000);

  it('a launcher it does not know: a rank it starts registers, though the launcher registered before it', () => {
    const dir = join(work, 'own-launcher');
    mkdirSync(dir);
    // a Python parent with no rank, starting ranks 0 and 1 (the marker it leaves must not hide them)
    const parent = [
      'import os, subprocess, sys',
      'for r in ("0", "1"):',
      '    subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], env={**os.environ, "RANK": r})',
      // its own work (no rank of its own) does not register
      'subprocess.run([sys.executable, "-c", "pass"])',
    ].join('\n');
    const r = spawnSync('/usr/bin/python3', ['-c', parent], { env: env(dir), encoding: 'utf8' });
    const [p0, p1] = r.stdout.trim().split('\n').map(Number);
    expect(headers(dir)).toEqual([
      [0, null, r.pid],
      [0, 'RANK', p0],
      [1, 'RANK', p1],
    ]);
  });
});

describe('the stack log reader', () => {
  it('a dump nobody asked for is not one; a late in-python line marks the dump taken in native code', () => {
    const lines = [
      `# nsa-dbg stacks ${JSON.stringify({ rank: 3, local_rank: 1, pid: 77, host: 'gpu7', signal: 12, main: '0x00000000000000aa', path: '/r/x.log', t: 100 })}`,
      'Current thread 0x00000000000000aa (most recent call first):',
      '  File "a.py", line 1 in f',
      '# request 200.000',
      'Thread 0x00000000000000bb (most recent call first):',
      '  File "t.py", line 9 in loop',
      '',
      'Current thread 0x00000000000000aa (most recent call first):',
      '  File "a.py", line 5 in all_reduce',
      '  File "a.py", line 9 in <module>',
      '# in-python 203.500',
    ];
    const workers: WorkerEvent[] = [];
    const dumps: DumpEvent[] = [];
    const r = new StackLogReader(
      'x.log',
      (w) => workers.push(w),
      (d) => dumps.push(d),
    );
    for (const l of lines) r.line(l);
    r.end();
    expect(workers).toEqual([
      {
        kind: 'worker',
        rank: 3,
        localRank: 1,
        pid: 77,
        host: 'gpu7',
        signal: 12,
        file: 'x.log',
        path: '/r/x.log',
        ts: 100,
      },
    ]);
    const last = dumps.at(-1)!;
    expect(last.file).toBe('x.log@200.000');
    expect(last.inPython).toBe(false); // answered 3.5 s later: after a native call returned
    expect(last.threads.find((t) => t.name === 'MainThread')!.frames.at(-1)!.function).toBe('all_reduce');
  });

  it('how soon Python ran is timed from when the box sent the signal, not from when nsa-dbg asked', () => {
    // asked at 200.0; the signal left the box 2.4 s later (a slow ssh link); Python ran 0.1 s after
    const read = (request: string, inPython: string) => {
      const dumps: DumpEvent[] = [];
      const r = new StackLogReader(
        'x.log',
        () => {},
        (d) => dumps.push(d),
      );
      for (const l of [
        request,
        'Current thread 0x01 (most recent call first):',
        '  File "a.py", line 5 in f',
        inPython,
      ])
        r.line(l);
      r.end();
      return dumps.at(-1)!;
    };
    expect(read('# request 200.000 202.400', '# in-python 202.500').inPython).toBe(true);
    expect(read('# request 200.000 202.400', '# in-python 204.000').inPython).toBe(false);
    // the old form (and a date without %N) is timed from the id, as before
    expect(read('# request 200.000', '# in-python 202.500').inPython).toBe(false);
    const odd = read('# request 200.000 1795.%N', '# in-python 200.500');
    expect([odd.file, odd.inPython]).toEqual(['x.log@200.000', true]);
  });

  it('a hook that marks `seen`: how soon Python ran is timed from its watcher, whichever mark comes first', () => {
    const read = (marks: string[], opts: { header?: boolean; sample?: boolean } = {}) => {
      const dumps: DumpEvent[] = [];
      const samples: DumpEvent[] = [];
      const r = new StackLogReader(
        'x.log',
        () => {},
        (d) => dumps.push(d),
        () => {},
        (s) => samples.push(s.dump),
      );
      const head = `# nsa-dbg stacks ${JSON.stringify({ rank: 0, pid: 7, signal: 12, main: '0x01', t: 100 })}`;
      for (const l of [
        head,
        ...(opts.header === false ? [] : ['# marks seen']),
        `# request 200.000 200.000${opts.sample ? ' sample' : ''}`,
        'Current thread 0x01 (most recent call first):',
        '  File "a.py", line 5 in f',
        ...marks,
      ])
        r.line(l);
      r.flush(); // what has been read so far is all there is for now
      return { r, dumps, samples };
    };
    const last = (marks: string[]) => read(marks).dumps.at(-1)!;
    // both late (no core for 2.4 s), close together: in Python
    expect(last(['# seen 202.400', '# in-python 202.500']).inPython).toBe(true);
    // the main thread's handler ran before the watcher got the GIL
    expect(last(['# in-python 202.500', '# seen 202.600']).inPython).toBe(true);
    // seen at once, Python 3 s later (a native call returned): not in Python
    expect(last(['# seen 200.010', '# in-python 203.000']).inPython).toBe(false);
    // seen, no answer yet: undecided until a second after the seen mark
    expect([last(['# seen 200.010']).inPython, last(['# seen 200.010']).inPythonBy]).toEqual([
      undefined,
      201.01,
    ]);
    // neither mark yet: the watcher is waited for (SEEN_WAIT_S), not a second from the send
    expect([last([]).inPython, last([]).inPythonBy]).toEqual([undefined, 205]);
    // a late in-python with no seen mark yet: undecided until the seen mark comes
    expect(last(['# in-python 202.500']).inPython).toBeUndefined();
    // an answer within a second of the send needs no seen mark
    expect(last(['# in-python 200.300']).inPython).toBe(true);
    // a hook without the watcher (no `# marks seen`): a second from the send, as before
    const old = read(['# in-python 202.500'], { header: false }).dumps.at(-1)!;
    expect([old.inPython, old.inPythonBy]).toEqual([false, 201]);
    // a straggler sample is handed on once, whole: after both marks, not at the first
    const s = read(['# in-python 202.500'], { sample: true });
    expect(s.samples).toHaveLength(0);
    s.r.line('# seen 202.600');
    expect(s.samples.map((d) => d.inPython)).toEqual([true]);
    s.r.end();
    expect(s.samples).toHaveLength(1);
  });
});
