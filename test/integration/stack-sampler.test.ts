/**
 * The stack sampler against real processes (python3 with a SIGUSR1 handler, LocalTarget): a stop may
 * only signal the trainer once no filed dump can be overwritten. Dumps are named by the second
 * (like nsa-vibe's), so `quiet()` resolves only after the second of the last filed dump; and a
 * request whose signal went out before the run was being stopped (closed) is still waited for and
 * recorded (the trainer's dump names no rank: only its request's record files it with one). With the stack hook, a stop also waits out the
 * in-python window of its last signal, so Python that only the stop lets run reads as no answer.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DumpEvent, WorkerEvent } from '../../src/ingest/events.js';
import { PROBES_FILE, parseProbeLine } from '../../src/ingest/probes.js';
import { StackLogReader } from '../../src/ingest/stack-log.js';
import { IN_PYTHON_S } from '../../src/ingest/stack-log-format.js';
import { StackSampler } from '../../src/runs/stack-sampler.js';
import { DUMP_WAIT_MS } from '../../src/runs/trainer-dump-ladder.js';
import { LocalTarget } from '../../src/targets/local.js';
import { waitUntil } from '../helpers/wait.js';

const HOOK = join(import.meta.dirname, '..', '..', 'src', 'stacks');

// a handler that writes a dump named by the second (ANSWER=1), a second late (ANSWER=late), or one
// that never writes (ANSWER=0)
const TRAINER = `
import os, signal, sys, time
out = sys.argv[1]
def dump(signum, frame):
    if os.environ["ANSWER"] == "late":
        time.sleep(1)
    if os.environ["ANSWER"] != "0":
        with open(os.path.join(out, "stackdump_%d.txt" % int(time.time())), "w") as f:
            f.write("Signal 10 at %sZ\\n" % time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()))
signal.signal(signal.SIGUSR1, dump)
print("ready", flush=True)
while True:
    time.sleep(0.05)
`;

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function trainer(
  answer: boolean | 'late',
): Promise<{ pid: number; dir: string; sampler: StackSampler }> {
  const dir = mkdtempSync(join(tmpdir(), 'nsa-sampler-'));
  dirs.push(dir);
  const child = spawn('python3', ['-u', '-c', TRAINER, dir], {
    env: { ...process.env, ANSWER: answer === 'late' ? 'late' : answer ? '1' : '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (b: Buffer) => {
    out += b.toString();
  });
  await waitUntil(() => out.includes('ready'), { what: 'the handler installed' });
  const sampler = new StackSampler({
    target: new LocalTarget(),
    runDir: dir,
    outDir: dir,
    dumpsSeen: () =>
      readdirSync(dir)
        .filter((f) => f.startsWith('stackdump_'))
        .map((file) => ({ file, ts: Number(/_(\d+)\.txt$/.exec(file)![1]) })),
    trainerNowS: () => Date.now() / 1000,
    pollMs: 20,
  });
  return { pid: child.pid!, dir, sampler };
}

/** rank 1 asked for its stack, the run stopped (close) 300 ms after the signal went out, quiet() done */
async function closedAfterSignal(answer: boolean | 'late') {
  const { pid, dir, sampler } = await trainer(answer);
  const t0 = Date.now();
  const pending = sampler.request(1, pid, 'suspect');
  await waitUntil(() => Date.now() - t0 > 300);
  sampler.close();
  await sampler.quiet();
  return { dir, sampler, req: await pending };
}

const records = (dir: string) =>
  readFileSync(join(dir, PROBES_FILE), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map(parseProbeLine);

describe('stack sampler: a stop never lets a late dump overwrite a filed one, nor a late mark read as an answer', () => {
  it('quiet() resolves only once the second the filed dump is named by is over', async () => {
    const { pid, dir, sampler } = await trainer(true);
    const t0 = Date.now() / 1000;
    expect(sampler.answeredSince(0, 0)).toBe(false);
    const req = await sampler.request(0, pid, 'suspect');
    expect(req.outcome).toBe('written');
    // known at once, before the probe file is read back: the culprit wait relies on it
    expect(sampler.answeredSince(0, t0 - 1)).toBe(true);
    expect(sampler.answeredSince(0, Date.now() / 1000 + 1)).toBe(false);
    const second = Number(/_(\d+)\.txt$/.exec(req.file!)![1]);
    await sampler.quiet();
    // a dump written from now on is named by a later second than the filed one
    expect(Date.now() / 1000).toBeGreaterThanOrEqual(second + 1);
    expect(records(dir)).toMatchObject([
      { kind: 'dump-request', rank: 0, outcome: 'written', file: req.file },
    ]);
  });

  it('closed after its signal went out: the request is still waited for and recorded, so its dump is filed with its rank', async () => {
    // the handler answers a second after the signal; the run is stopped in between
    const { dir, req } = await closedAfterSignal('late');
    expect(req.outcome).toBe('written');
    // quiet() waited for it: the stop signals the trainer only once it is recorded
    expect(records(dir)).toMatchObject([
      { kind: 'dump-request', rank: 1, outcome: 'written', file: req.file },
    ]);
  });

  it('closed after its signal went out to a rank that never answers: recorded unanswered after the 5 s', async () => {
    const t0 = Date.now();
    const { dir, req, sampler } = await closedAfterSignal(false);
    expect(req.outcome).toBe('none-within-5s');
    expect(sampler.answeredSince(1, 0)).toBe(false);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(DUMP_WAIT_MS);
    expect(records(dir)).toMatchObject([{ kind: 'dump-request', rank: 1, outcome: 'none-within-5s' }]);
  });

  it('closed before its signal: no signal, no record, no wait', async () => {
    const { pid, dir, sampler } = await trainer(true);
    sampler.close();
    const t0 = Date.now();
    const req = await sampler.request(1, pid, 'suspect');
    await sampler.quiet();
    expect(req.file).toBeUndefined();
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(readdirSync(dir).filter((f) => f.startsWith('stackdump_') || f === PROBES_FILE)).toEqual([]);
  });

  it('closed: a check that was still reading /proc appends nothing (the files were read for the last time)', async () => {
    const { pid, dir, sampler } = await trainer(true);
    await sampler.record({ kind: 'proc', ts: 1, rank: 0, pid, state: 'S', cpuPct: 0 });
    sampler.close();
    await sampler.record({ kind: 'proc', ts: 2, rank: 0, pid, state: 'S', cpuPct: 0 });
    await sampler.idle();
    expect(records(dir).map((r) => r?.ts)).toEqual([1]);
  });

  it('quiet() waits out the stack hook signal’s in-python window: Python that a stop lets run is no answer', async () => {
    // a rank blocked in one long C call (as in a collective), with nsa-dbg's stack hook
    const dir = mkdtempSync(join(tmpdir(), 'nsa-sampler-hook-'));
    dirs.push(dir);
    const child = spawn('/usr/bin/python3', ['-c', 'print("ready", flush=True)\nsum(range(10**11))'], {
      env: {
        ...process.env,
        PYTHONPATH: HOOK,
        NSA_DBG_STACK_DIR: dir,
        NSA_DBG_STACK_SIGNAL: '12',
        RANK: '0',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    await waitUntil(() => readdirSync(dir).some((f) => f.startsWith('nsa-dbg-stacks_')), {
      what: 'the hook',
    });
    const log = readdirSync(dir).find((f) => f.startsWith('nsa-dbg-stacks_'))!;
    const read = () => {
      const workers = new Map<number, WorkerEvent>();
      const dumps = new Map<string, DumpEvent>();
      const r = new StackLogReader(
        log,
        (w) => workers.set(w.rank, w),
        (d) => dumps.set(d.file, d),
      );
      for (const line of readFileSync(join(dir, log), 'utf8').split('\n')) r.line(line);
      r.end();
      return { workers, dumps };
    };
    await waitUntil(() => read().workers.size === 1, { what: 'the worker record' });
    const sampler = new StackSampler({
      target: new LocalTarget(),
      runDir: dir,
      outDir: dir,
      dumpsSeen: () => [],
      dumpNamed: (name) => read().dumps.get(name),
      workers: () => read().workers,
      trainerNowS: () => Date.now() / 1000,
      pollMs: 20,
    });
    const req = await sampler.request(0, child.pid!, 'suspect');
    expect(req.outcome).toBe('faulthandler');
    const sent = Number(/^# request \S+ (\S+)$/m.exec(readFileSync(join(dir, log), 'utf8'))![1]);
    await sampler.quiet();
    // a stop from now on: any in-python mark it causes comes after the window, read as native
    expect(Date.now() / 1000).toBeGreaterThan(sent + IN_PYTHON_S);
    expect(read().dumps.get(req.file!)?.inPython).toBeUndefined();
  });
});
