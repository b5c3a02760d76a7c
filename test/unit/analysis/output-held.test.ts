/**
 * The processes of a run that still held its output when the trainer ended, as the launcher named
 * them in output_held (test/fixtures/output-held): one note each, the program by its name rather
 * than its path, a long command line cut to 60 characters.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeDir } from '../../../src/runs/analyze-dir.js';

const DIR = join(import.meta.dirname, '..', '..', 'fixtures', 'output-held');

describe('output_held', () => {
  it('names each process that still holds the output in a note; the verdict is the trainer’s', async () => {
    const r = await analyzeDir(DIR);
    expect(r.verdict).toBe('pass');
    // (its trainer prints no step line: the note that says so comes first)
    expect(r.notes.filter((n) => n.includes('still holds the output'))).toEqual([
      'pid 4711 (`python3 -c import os, sys, time; print(1, flush=True); time…`) still holds the output',
      'pid 4712 (`rsync -a --partial checkpoints/ backup:/srv/ckpt/`) still holds the output',
    ]);
  });
});
