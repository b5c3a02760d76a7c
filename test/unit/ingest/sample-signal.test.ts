/**
 * Straggler samples by the hook's own signal (SIGURG): the hook's watcher thread writes the main
 * thread's frames in one write and a `# sampled` mark, instead of a faulthandler dump of every
 * thread from the signal handler. Real Python processes with src/stacks/sitecustomize.py, and the
 * log read back by the stack-log reader as nsa-dbg reads it.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StackSampleEvent, WorkerEvent } from '../../../src/ingest/events.js';
import { StackLogReader } from '../../../src/ingest/stack-log.js';
import { catchesSignal } from '../../../src/runs/signals.js';
import { waitUntil } from '../../helpers/wait.js';

const HOOK = join(import.meta.dirname, '..', '..', '..', 'src', 'stacks');
const work = mkdtempSync(join(tmpdir(), 'nsa-sample-sig-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const SIGURG = 23;

function read(lines: string[]): { workers: WorkerEvent[]; samples: StackSampleEvent[] } {
  const workers: WorkerEvent[] = [];
  const samples: StackSampleEvent[] = [];
  const r = new StackLogReader(
    'x.log',
    (w) => workers.push(w),
    () => {},
    () => {},
    (s) => samples.push(s),
  );
  for (const line of lines) r.line(line);
  r.end();
  return { workers, samples };
}

const sigCgt = (pid: number) => /^SigCgt:\s*(\S+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]!;

function start(dir: string, script: string) {
  mkdirSync(dir);
  const p = spawn('/usr/bin/python3', ['-c', script], {
    env: { ...process.env, PYTHONPATH: HOOK, NSA_DBG_STACK_DIR: dir, NSA_DBG_STACK_SIGNAL: '12', RANK: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  p.stdout.on('data', (b: Buffer) => {
    out += b.toString();
  });
  const log = () => join(dir, readdirSync(dir).find((f) => f.includes(`_pid${p.pid}.`)) ?? 'none');
  const text = () => {
    try {
      return readFileSync(log(), 'utf8');
    } catch {
      return '';
    }
  };
  const ask = (pid = p.pid!) => {
    const t = (Date.now() / 1000).toFixed(3);
    writeFileSync(log(), `# request ${t} ${t} sample\n`, { flag: 'a' });
    process.kill(pid, SIGURG);
  };
  return { p, log, text, ask, out: () => out };
}

describe('straggler samples by the sample signal', () => {
  it('the reader: `# samples N` re-tells the worker with its sample signal; a `# sampled` mark makes a sample whole; `off` takes it back', () => {
    const head =
      '# nsa-dbg stacks {"rank": 2, "pid": 77, "signal": 12, "main": "0x00000000000000aa", "path": "/r/x.log", "t": 5}';
    const sample = [
      '# request 10.000 10.001 sample',
      'Thread 0x00000000000000aa (most recent call first):',
      '  File "/t/torch/distributed/distributed_c10d.py", line 9 in all_reduce',
      '  File "train.py", line 3 in step',
      '# sampled 10.004',
    ];
    const { workers, samples } = read([head, '# marks seen', '# samples 23', ...sample, '# samples off']);
    expect(workers.map((w) => [w.pid, w.signal, w.sampleSignal])).toEqual([
      [77, 12, undefined],
      [77, 12, 23],
      [77, 12, undefined],
    ]);
    // handed on at the mark, not at the end: a sample needs no in-python or seen mark on this path
    const partial = read([head, '# marks seen', '# samples 23', ...sample]);
    expect(partial.samples).toHaveLength(1);
    expect(samples).toHaveLength(1);
    const main = samples[0]!.dump.threads.find((t) => t.name === 'MainThread')!;
    expect(main.frames.map((f) => f.function)).toEqual(['step', 'all_reduce']); // outermost first
    // a sample cut before its mark is not read until the log ends (a half one could miss its frame)
    const r = new StackLogReader(
      'x.log',
      () => {},
      () => {},
      () => {},
      (s) => samples.push(s),
    );
    for (const line of [head, '# marks seen', '# samples 23', ...sample.slice(0, 3)]) r.line(line);
    r.flush();
    expect(samples).toHaveLength(1);
  });

  it('a real rank: SIGURG armed and announced, each sample the main thread’s frames in one write; the trainer still sees SIGURG as default; a forked child ignores it', async () => {
    const s = start(
      join(work, 'rank'),
      [
        'import os, signal, sys, time',
        'def waiting_in_collective():',
        '    while True: time.sleep(0.01)',
        'def step():',
        '    waiting_in_collective()',
        'print(signal.getsignal(signal.SIGURG) == signal.SIG_DFL, flush=True)',
        'child = os.fork()',
        'if child == 0:',
        '    time.sleep(30); os._exit(0)',
        'print(child, flush=True)',
        'step()',
      ].join('\n'),
    );
    try {
      await waitUntil(() => /^# samples 23$/m.test(s.text()) && s.out().split('\n').length >= 3, {
        what: 'the hook armed its sample signal',
      });
      const [dflSeen, childPid] = s.out().trim().split('\n');
      expect(dflSeen).toBe('True');
      expect(catchesSignal(sigCgt(s.p.pid!), SIGURG)).toBe(true);
      for (let i = 0; i < 3; i++) {
        s.ask();
        await waitUntil(() => (s.text().match(/^# sampled /gm) ?? []).length === i + 1, {
          what: `sample ${i + 1} written`,
        });
      }
      const { workers, samples } = read(s.text().split('\n'));
      expect(workers.at(-1)!.sampleSignal).toBe(SIGURG);
      expect(samples).toHaveLength(3);
      for (const x of samples) {
        const main = x.dump.threads.find((t) => t.name === 'MainThread')!;
        expect(main.frames.map((f) => f.function).slice(-2)).toEqual(['step', 'waiting_in_collective']);
        // the main thread's frames alone: no faulthandler dump of the other threads
        expect(x.dump.threads).toHaveLength(1);
      }
      expect(s.text()).not.toMatch(/Current thread/);
      // the forked child (a DataLoader worker) is no rank: SIGURG is ignored there, as by default
      const child = Number(childPid);
      expect(catchesSignal(sigCgt(child), SIGURG)).toBe(false);
      process.kill(child, SIGURG);
      await new Promise((r) => setTimeout(r, 300));
      expect(readFileSync(`/proc/${child}/status`, 'utf8')).not.toMatch(/^State:\s*Z/m);
      expect(s.p.exitCode).toBeNull();
      expect((s.text().match(/^# sampled /gm) ?? []).length).toBe(3);
    } finally {
      s.p.kill('SIGKILL');
      const child = Number(s.out().trim().split('\n')[1]);
      if (child > 0) process.kill(child, 'SIGKILL');
    }
  });

  it('a trainer that installs its own SIGURG handler: `# samples off`, its handler runs, no sample written', async () => {
    const s = start(
      join(work, 'taken'),
      [
        'import signal, time',
        'time.sleep(0.5)',
        'prev = signal.signal(signal.SIGURG, lambda *a: print("mine", flush=True))',
        'print("set", prev == signal.SIG_DFL, flush=True)',
        'while True: time.sleep(0.01)',
      ].join('\n'),
    );
    try {
      await waitUntil(() => /^# samples off$/m.test(s.text()) && s.out().includes('set'), {
        what: 'the hook gave the signal back',
      });
      // what it replaced reads as the default, not the hook's no-op
      expect(s.out()).toContain('set True');
      s.ask();
      await waitUntil(() => s.out().includes('mine'), { what: "the trainer's handler ran" });
      await new Promise((r) => setTimeout(r, 200));
      expect(s.text()).not.toMatch(/^# sampled /m);
      expect(read(s.text().split('\n')).workers.at(-1)!.sampleSignal).toBeUndefined();
    } finally {
      s.p.kill('SIGKILL');
    }
  });
});
