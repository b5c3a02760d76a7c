/**
 * The stack hook's last words in real Python processes (Debian's python3, no torch): for each way a
 * process ends (test/fixtures/trainers/signal_modes.py), the process ends exactly as it does without
 * the hook (exit status or signal, its own output), and the rank's stack log holds a record of the
 * signal with the main thread where the program was — also when the main thread is blocked in
 * native code, where a Python handler alone would never run (and SIGTERM would no longer end it).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LastWordsEvent } from '../../../src/ingest/events.js';
import { StackLogReader } from '../../../src/ingest/stack-log.js';

const HOOK = join(import.meta.dirname, '..', '..', '..', 'src', 'stacks');
const SCRIPT = join(import.meta.dirname, '..', '..', 'fixtures', 'trainers', 'signal_modes.py');
const work = mkdtempSync(join(tmpdir(), 'nsa-last-words-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  words: LastWordsEvent[];
  ms: number;
}

let n = 0;
/** runs a mode, sends `sig` once it is ready; with the hook, its stack log's last words */
function run(mode: string, sig: NodeJS.Signals | null, hook: boolean): Promise<Ended> {
  const dir = join(work, `r${n++}`);
  const env: Record<string, string | undefined> = { ...process.env };
  delete env.PYTHONPATH;
  if (hook) Object.assign(env, { PYTHONPATH: HOOK, NSA_DBG_STACK_DIR: dir, RANK: '0' });
  if (hook) mkdirSync(dir);
  return new Promise((resolve) => {
    const p = spawn('/usr/bin/python3', ['-u', SCRIPT, mode], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let sent = 0;
    p.stdout.on('data', (b: Buffer) => {
      stdout += b.toString();
      if (sig !== null && sent === 0 && stdout.includes('ready\n')) {
        sent = Date.now();
        setTimeout(() => p.kill(sig), 300);
      }
    });
    p.on('close', (code, signal) => {
      const words: LastWordsEvent[] = [];
      if (hook)
        for (const f of readdirSync(dir)) {
          const r = new StackLogReader(
            f,
            () => {},
            () => {},
            (w) => words.push(w),
          );
          for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) r.line(line);
          r.end();
        }
      resolve({ code, signal, stdout, words: dedupe(words), ms: sent ? Date.now() - sent : 0 });
    });
  });
}

/** a record re-emitted as it grew: its last version */
const dedupe = (ws: LastWordsEvent[]) => [...new Map(ws.map((w) => [w.name, w])).values()];
const mainTop = (w: LastWordsEvent) => w.threads.find((t) => t.name === 'MainThread')?.frames.at(-1);

async function both(mode: string, sig: NodeJS.Signals | null) {
  const [plain, hooked] = [await run(mode, sig, false), await run(mode, sig, true)];
  // ends exactly as without the hook: the same status or signal, the same output
  expect({ code: hooked.code, signal: hooked.signal, stdout: hooked.stdout }).toEqual({
    code: plain.code,
    signal: plain.signal,
    stdout: plain.stdout,
  });
  return hooked;
}

describe('last words from the stack hook, in real processes', () => {
  it('SIGTERM in time.sleep: a record, then the default end (SIGTERM)', async () => {
    const r = await both('sleep', 'SIGTERM');
    expect(r.signal).toBe('SIGTERM');
    expect(r.words.map((w) => [w.signal, w.fatal, w.complete])).toEqual([['SIGTERM', false, true]]);
    expect(r.words[0]!.at).toBeGreaterThan(1.7e9);
    expect(mainTop(r.words[0]!)).toMatchObject({ function: '<module>' });
    expect(r.words[0]!.threads.map((t) => t.name)).toEqual(['MainThread']);
  });

  it('SIGTERM while the main thread is blocked in native code: the record, and the end at once', async () => {
    const r = await both('native', 'SIGTERM');
    expect(r.signal).toBe('SIGTERM');
    expect(r.ms).toBeLessThan(5000);
    expect(r.words.map((w) => w.signal)).toEqual(['SIGTERM']);
    expect(mainTop(r.words[0]!)).toMatchObject({ function: '<module>' });
    expect(mainTop(r.words[0]!)!.file).toMatch(/signal_modes\.py$/);
  }, 20_000);

  it('SIGINT under Python’s own handler: a record, KeyboardInterrupt as without the hook', async () => {
    const r = await both('sleep', 'SIGINT');
    expect(r.signal).toBe('SIGINT');
    expect(r.words.map((w) => w.signal)).toEqual(['SIGINT']);
    const c = await both('catch', 'SIGINT');
    expect(c.code).toBe(3);
    expect(c.stdout).toContain('caught KeyboardInterrupt');
  });

  it("a trainer's own SIGTERM handler still runs (and getsignal still shows it); the record is written first", async () => {
    const r = await both('own', 'SIGTERM');
    expect(r.code).toBe(7);
    expect(r.stdout).toContain('getsignal is own: True');
    expect(r.stdout).toContain('own handler ran');
    expect(r.words.map((w) => w.signal)).toEqual(['SIGTERM']);
    const restored = await both('restore', 'SIGTERM');
    expect(restored.stdout).toContain('old is default: True');
    expect(restored.signal).toBe('SIGTERM');
    expect(restored.words.map((w) => w.signal)).toEqual(['SIGTERM']);
  });

  it("fatal signals: faulthandler's record (SIGSEGV, SIGABRT), the same death", async () => {
    const segv = await both('segv', null);
    expect(segv.signal).toBe('SIGSEGV');
    expect(segv.words.map((w) => [w.signal, w.fatal, w.at])).toEqual([['SIGSEGV', true, null]]);
    expect(mainTop(segv.words[0]!)).toMatchObject({ function: 'string_at' });
    const abrt = await both('abort', null);
    expect(abrt.signal).toBe('SIGABRT');
    expect(abrt.words.map((w) => w.signal)).toEqual(['SIGABRT']);
  });

  it("a forked child's SIGTERM ends the child only: no record, the rank lives on (forked from any thread)", async () => {
    for (const mode of ['fork', 'fork-thread']) {
      const r = await both(mode, null);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('child ended by signal 15');
      expect(r.stdout).toContain('parent alive');
      expect(r.words).toEqual([]);
    }
  });
});
