import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NotebookInUse } from '../../src/notebook/lock.js';
import { NotebookStore, parseNotebook } from '../../src/notebook/store.js';

const WRITER = join(import.meta.dirname, '..', 'helpers', 'notebook-writer.mjs');
const dir = mkdtempSync(join(tmpdir(), 'nsa-nb-atomic-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** start the writer and resolve once it printed `marker` (its first write, or the lock) */
function start(mode: 'write' | 'hold', file: string, marker: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, [WRITER, mode, file], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      if (marker.test(out)) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`writer exited ${code}: ${err}`)));
  });
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('notebook writes', () => {
  it('survive SIGKILL at 100 random moments: the file always parses, old or new', async () => {
    const file = join(dir, 'killed.json');
    let lastCount = -1;
    for (let i = 0; i < 100; i++) {
      // each writer takes over the stale lock its killed predecessor left
      const child = await start('write', file, /wrote \d+/);
      const delayMs = Math.floor(Math.random() * 40);
      await new Promise((r) => setTimeout(r, delayMs));
      await killed(child);
      const nb = parseNotebook(readFileSync(file, 'utf8'), file);
      expect(nb.cells.length).toBeGreaterThan(0);
      expect(nb.cells.length).toBeLessThanOrEqual(4);
      for (const c of nb.cells) expect(c.series.loss).toHaveLength(4000);
      expect(nb.nextId).toBeGreaterThan(lastCount);
      lastCount = nb.nextId;
    }
    // the next owner clears the temp files of writes killed before their rename (one is made here
    // for certain: the kills above may or may not have left any)
    writeFileSync(join(dir, '.killed.json.99999.x.tmp'), '{"cells": [');
    NotebookStore.open(file).close();
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a second process on one notebook is told the pid that holds it', async () => {
    const file = join(dir, 'held.json');
    const holder = await start('hold', file, /locked/);
    try {
      expect(() => NotebookStore.open(file)).toThrow(NotebookInUse);
      expect(() => NotebookStore.open(file)).toThrow(`in use by pid ${holder.pid}`);
    } finally {
      await killed(holder);
    }
    // the holder died without releasing: its lock is stale and is taken over
    const store = NotebookStore.open(file);
    store.close();
  });
});
