import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireLock, NotebookInUse } from '../../../src/notebook/lock.js';

const deadPid = () => Number(spawnSync('sh', ['-c', 'echo $$']).stdout.toString().trim());

describe('acquireLock', () => {
  it('holds the lock with its pid and a nonce, and removes only its own on release', () => {
    const nb = join(mkdtempSync(join(tmpdir(), 'nsa-lock-')), 'nb.json');
    const lock = acquireLock(nb);
    expect(readFileSync(`${nb}.lock`, 'utf8')).toMatch(new RegExp(`^${process.pid} [0-9a-f]{16}\\n$`));
    lock.release();
    expect(existsSync(`${nb}.lock`)).toBe(false);
  });

  it('refuses a lock whose process lives, naming it', () => {
    const nb = join(mkdtempSync(join(tmpdir(), 'nsa-lock-')), 'nb.json');
    writeFileSync(`${nb}.lock`, `${process.ppid} 0123\n`);
    expect(() => acquireLock(nb)).toThrow(new NotebookInUse(nb, process.ppid));
  });

  it('takes over a stale lock, and one whose taker died in the middle of taking it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-lock-'));
    const nb = join(dir, 'nb.json');
    writeFileSync(`${nb}.lock`, `${deadPid()} aaaa\n`);
    // a process that won the takeover of that lock and was killed before it finished
    writeFileSync(`${nb}.lock.aaaa`, `${deadPid()} bbbb\n`);
    const lock = acquireLock(nb);
    expect(readFileSync(`${nb}.lock`, 'utf8')).toMatch(new RegExp(`^${process.pid} `));
    lock.release();
    // the takeover files are cleaned up behind it
    expect(readdirSync(dir)).toEqual([]);
  });

  it('an old nsa-dbg’s lock (a pid alone) is read too', () => {
    const nb = join(mkdtempSync(join(tmpdir(), 'nsa-lock-')), 'nb.json');
    writeFileSync(`${nb}.lock`, `${process.ppid}\n`);
    expect(() => acquireLock(nb)).toThrow(NotebookInUse);
    writeFileSync(`${nb}.lock`, `${deadPid()}\n`);
    acquireLock(nb).release();
  });
});
