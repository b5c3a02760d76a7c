/**
 * The notebook lock under a race: a stale lock (its pid dead) and six real processes opening the
 * notebook in the same instant, many times over. Exactly one may hold it each time. A lock that
 * was a pid file replaced when stale let two or three of them in (6 of 30 trials).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';

const CONTENDER = join(import.meta.dirname, '..', 'helpers', 'lock-contender.mjs');
const CONTENDERS = 6;
const TRIALS = 40;
const dir = mkdtempSync(join(tmpdir(), 'nsa-nb-lock-'));
const procs: ChildProcess[] = [];
afterAll(() => {
  for (const p of procs) p.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** a pid that is certainly not running: a process that has already exited */
function deadPid(): number {
  const r = spawnSync('sh', ['-c', 'echo $$']);
  return Number(r.stdout.toString().trim());
}

describe('the notebook lock', () => {
  it(`a stale lock and ${CONTENDERS} processes opening at once: exactly one holds it, ${TRIALS} times`, async () => {
    const file = join(dir, 'nb.json');
    const replies = new Map<string, string[]>();
    const waiters: Array<() => void> = [];
    const ready: Array<Promise<void>> = [];
    for (let i = 0; i < CONTENDERS; i++) {
      const p = spawn(process.execPath, [CONTENDER, file], { stdio: ['pipe', 'pipe', 'inherit'] });
      procs.push(p);
      ready.push(
        new Promise((resolve) => {
          createInterface({ input: p.stdout! }).on('line', (line) => {
            if (line === 'ready') return resolve();
            const [trial, ...rest] = line.split(' ');
            replies.set(trial!, [...(replies.get(trial!) ?? []), rest.join(' ')]);
            for (const w of waiters.splice(0)) w();
          });
        }),
      );
    }
    await Promise.all(ready);
    const holders: number[] = [];
    for (let t = 0; t < TRIALS; t++) {
      // what a killed nsa-dbg leaves: a lock naming a process that is gone
      writeFileSync(`${file}.lock`, `${deadPid()}\n`);
      const at = Date.now() + 100;
      for (const p of procs) p.stdin!.write(`go ${t} ${at}\n`);
      while ((replies.get(String(t)) ?? []).length < CONTENDERS)
        await new Promise<void>((resolve) => waiters.push(resolve));
      const got = replies.get(String(t))!;
      expect(got.filter((r) => r !== 'held' && r !== 'in-use')).toEqual([]);
      holders.push(got.filter((r) => r === 'held').length);
    }
    expect(holders).toEqual(Array(TRIALS).fill(1));
  });
});
