import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readNotebook } from '../../src/notebook/store.js';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'nsa-nb-headless-'));
const env = { NSA_DBG_HOME: join(dir, 'home'), XDG_CONFIG_HOME: join(dir, 'config') };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = 'hf_notebooksecret123';

describe('run --headless --notebook', () => {
  it('appends one cell per run, evidence beside the notebook, secrets masked', async () => {
    // a project lane that carries a token: it must reach the trainer but never the notebook
    mkdirSync(join(dir, '.nsa-dbg', 'presets'), { recursive: true });
    writeFileSync(
      join(dir, '.nsa-dbg', 'presets', 'tokened.yaml'),
      `name: tokened\ndescription: batched prefill with a token\nenv:\n  NSA_DISABLE_AUX_STATS: "1"\n  NSA_PREFILL_BATCHED: "1"\n  HF_TOKEN: ${SECRET}\nsteps: 3\n`,
    );
    const nbFile = join(dir, 'ab.json');
    const pass = await runCli(
      ['run', '--demo', '--headless', '--json', '--notebook', 'ab.json', '--lane', 'tokened'],
      { cwd: dir, env },
    );
    expect(pass.code, pass.stderr).toBe(0);
    const nan = await runCli(
      ['run', '--demo', '--headless', '--json', '--notebook', 'ab.json', '--lane', 'fp16', '--steps', '4'],
      { cwd: dir, env },
    );
    expect(nan.code, nan.stderr).toBe(1);

    const nb = readNotebook(nbFile);
    expect(nb.cells.map((c) => [c.id, c.lane.name, c.state, c.verdict, c.go])).toEqual([
      ['c1', 'tokened', 'done', 'pass', true],
      ['c2', 'fp16', 'done', 'nan', false],
    ]);
    const [c1, c2] = nb.cells;
    expect(c1!.evidenceDir).toMatch(/^ab\.evidence\/\d{8}-\d{6}-tokened-/);
    expect(c1!.evidence).toContain('stdout.log');
    expect(c1!.summary).toMatchObject({ stepsReached: 3, nan: null, stall: null });
    expect(c1!.series.loss.map((p) => p[0])).toEqual([1, 2, 3]);
    expect(c1!.env.HF_TOKEN).toBe('***');
    expect(c2!.summary?.nan).toEqual({ step: 2, rank: 0 });
    expect(c2!.reasons?.join(' ')).toMatch(/non-finite loss at step 2/);
    expect(readFileSync(nbFile, 'utf8')).not.toContain(SECRET);
    // the trainer did get it
    expect(readFileSync(join(dir, c1!.evidenceDir, 'command.json'), 'utf8')).toContain(SECRET);
  });

  it('a notebook held by another process is refused before anything runs', async () => {
    const nbFile = join(dir, 'held.json');
    const holder = spawn(
      process.execPath,
      [join(import.meta.dirname, '..', 'helpers', 'notebook-writer.mjs'), 'hold', nbFile],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    await new Promise<void>((r) => holder.stdout!.once('data', () => r()));
    try {
      const r = await runCli(
        ['run', '--demo', '--headless', '--json', '--notebook', nbFile, '--lane', 'fp16'],
        { cwd: dir, env },
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`in use by pid ${holder.pid}`);
      expect(readNotebook(nbFile).cells).toEqual([]);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('a notebook from a newer nsa-dbg is refused with a clear error', async () => {
    const nbFile = join(dir, 'newer.json');
    writeFileSync(nbFile, '{"version": 99, "cells": []}');
    const r = await runCli(['run', '--demo', '--headless', '--notebook', nbFile, '--lane', 'fp16'], {
      cwd: dir,
      env,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('notebook format version 99 is newer than this nsa-dbg understands');
  });
});
