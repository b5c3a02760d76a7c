import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NotebookInUse } from '../../../src/notebook/lock.js';
import { NotebookFormatError } from '../../../src/notebook/migrate.js';
import { NOTEBOOK_VERSION } from '../../../src/notebook/model.js';
import {
  evidenceDirOf,
  NotebookStore,
  parseNotebook,
  readNotebook,
  serializeNotebook,
} from '../../../src/notebook/store.js';
import { newCell } from './cells.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'notebook');
const dir = mkdtempSync(join(tmpdir(), 'nsa-nb-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('notebook store', () => {
  it('creates a notebook, writes every action through, and reads it back', () => {
    const file = join(dir, 'a.json');
    const store = NotebookStore.open(file, () => new Date('2026-01-02T03:04:05Z'));
    expect(readNotebook(file)).toEqual({
      version: NOTEBOOK_VERSION,
      created: '2026-01-02T03:04:05.000Z',
      nextId: 1,
      cells: [],
    });
    store.dispatch({ type: 'addCell', cell: newCell('baseline') });
    store.dispatch({ type: 'updateCell', id: 'c1', patch: { state: 'done', verdict: 'hang' } });
    store.close();
    const nb = readNotebook(file);
    expect(nb.cells.map((c) => [c.id, c.lane.name, c.state, c.verdict])).toEqual([
      ['c1', 'baseline', 'done', 'hang'],
    ]);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('a second open of a held notebook says which pid holds it; closing frees it', () => {
    const file = join(dir, 'held.json');
    const a = NotebookStore.open(file);
    // same process, so fake another holder by writing a live foreign pid (our parent) into the lock
    a.close();
    writeFileSync(`${file}.lock`, `${process.ppid}\n`);
    expect(() => NotebookStore.open(file)).toThrow(NotebookInUse);
    expect(() => NotebookStore.open(file)).toThrow(`in use by pid ${process.ppid}`);
    rmSync(`${file}.lock`);
    NotebookStore.open(file).close();
  });

  it('refuses a newer format version with a clear error and leaves the file alone', () => {
    const file = join(dir, 'newer.json');
    const text = JSON.stringify({ version: NOTEBOOK_VERSION + 1, cells: [] });
    writeFileSync(file, text);
    expect(() => NotebookStore.open(file)).toThrow(NotebookFormatError);
    expect(() => readNotebook(file)).toThrow(/newer than this nsa-dbg understands/);
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('names the file for JSON that is not a notebook', () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, '{"cells": [');
    expect(() => readNotebook(file)).toThrow(`${file}: not valid JSON`);
    writeFileSync(file, '{"hello": 1}');
    expect(() => readNotebook(file)).toThrow('not an nsa-dbg notebook');
  });

  it('migrates a v0 notebook and writes it back as the current version on the next change', () => {
    const file = join(dir, 'v0.json');
    copyFileSync(join(FIX, 'v0.json'), file);
    const nb = readNotebook(file);
    expect(nb.version).toBe(NOTEBOOK_VERSION);
    expect(nb.cells.map((c) => [c.id, c.lane.name, c.verdict, c.evidenceDir])).toEqual([
      ['c1', 'baseline', 'hang', 'runs/20250826-101500-baseline-aaaa'],
      ['c3', 'batched-prefill', 'pass', 'runs/20250826-102000-batched-prefill-bbbb'],
    ]);
    // ids are never reused: the next cell after c3 is c4
    const store = NotebookStore.open(file);
    store.dispatch({ type: 'addCell', cell: newCell('fp16') });
    store.close();
    const raw = JSON.parse(readFileSync(file, 'utf8'));
    expect(raw.version).toBe(NOTEBOOK_VERSION);
    expect(raw.cells.map((c: { id: string }) => c.id)).toEqual(['c1', 'c3', 'c4']);
  });

  it('migrates a v1 notebook: series become [step, value] pairs, the run dir the evidence dir', () => {
    const nb = readNotebook(join(FIX, 'v1.json'));
    const c = nb.cells[0]!;
    expect(c.series).toEqual({ loss: [[1, 5.7]], toks: [[1, 64]] });
    expect(c.evidenceDir).toBe('runs/20250826-101500-fp16-cccc');
    expect(c.target).toBe('local');
    expect(nb.nextId).toBe(3);
  });

  it('writes series pairs one per line and reads them back unchanged', () => {
    const nb = readNotebook(join(FIX, 'v1.json'));
    nb.cells[0]!.series.loss = [
      [1, 5.25],
      [2, -1e-7],
    ];
    const text = serializeNotebook(nb);
    expect(text).toContain('[2, -1e-7]');
    expect(parseNotebook(text, 'x')).toEqual(nb);
  });

  it('keeps the evidence folder beside the notebook', () => {
    expect(evidenceDirOf('/x/ab.json')).toBe('/x/ab.evidence');
    expect(evidenceDirOf('/x/nb')).toBe('/x/nb.evidence');
  });
});

describe('a hand-edited notebook with a repeated cell id', () => {
  it('renumbers the later cell on open, says so in one line, and rewrites the file only on the next change', () => {
    const file = join(dir, 'duplicate-ids.json');
    copyFileSync(join(FIX, 'duplicate-ids.json'), file);
    const before = readFileSync(file, 'utf8');
    const store = NotebookStore.open(file);
    // the second c1 (batched-prefill) is its own cell now: looking it up by id finds it, not the first
    expect(store.get().cells.map((c) => [c.id, c.lane.name])).toEqual([
      ['c1', 'baseline'],
      ['c2', 'fp16'],
      ['c3', 'batched-prefill'],
    ]);
    expect(store.get().cells.find((c) => c.id === 'c3')?.verdict).toBe('pass');
    expect(store.openNote).toBe(
      'duplicate-ids.json repeats cell ids: the 2nd c1 is now c3 (saved to the file with the next change)',
    );
    expect(readFileSync(file, 'utf8')).toBe(before);
    // ids are never reused: the next new cell is c4, and the change writes the renumbered cells
    store.dispatch({ type: 'addCell', cell: newCell('fp16') });
    store.close();
    const raw = JSON.parse(readFileSync(file, 'utf8'));
    expect(raw.cells.map((c: { id: string }) => c.id)).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(raw.nextId).toBe(5);
  });

  it('says nothing for a notebook whose ids are all different', () => {
    const file = join(dir, 'v1-unique.json');
    copyFileSync(join(FIX, 'v1.json'), file);
    const store = NotebookStore.open(file);
    expect(store.openNote).toBeNull();
    store.close();
  });
});
