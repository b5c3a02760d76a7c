/**
 * `nsa-dbg analyze` end to end on the real captures: the command module run through yargs itself
 * (in-process, so no build is needed), and the built binary too when `dist/` exists. JSON shape,
 * exit statuses 0 / 1 / 2, the human report.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import yargs from 'yargs';
import { analyzeCommand, formatReport } from '../../src/cli/commands/analyze.js';

// real H200 captures, kept beside the tests (test/fixtures/nsa-vibe-h200/README.md)
const FIX = join(import.meta.dirname, '..', 'fixtures', 'nsa-vibe-h200');

/** Run the command in-process through yargs; capture stdout/stderr and the exit status. */
async function analyze(args: string[]): Promise<{ out: string; err: string; code: number }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
    out += String(s);
    return true;
  });
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
    err += String(s);
    return true;
  });
  process.exitCode = undefined;
  try {
    await yargs(['analyze', ...args])
      .command(analyzeCommand)
      .strict()
      .parseAsync();
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { out, err, code };
}

afterEach(() => {
  process.exitCode = undefined;
});

describe('nsa-dbg analyze', () => {
  it('--json on batched: one object with the issue fields, exit 1', async () => {
    const { out, code } = await analyze([`${FIX}/batched`, '--json']);
    expect(code).toBe(1);
    const r = JSON.parse(out);
    for (const k of [
      'verdict',
      'stepsReached',
      'ranks',
      'stall',
      'nan',
      'crash',
      'slowSteps',
      'throughput',
      'memory',
      'dumps',
      'skippedLines',
    ]) {
      expect(r).toHaveProperty(k);
    }
    expect(r).toMatchObject({
      verdict: 'incomplete',
      stepsReached: 17,
      ranks: [0],
      stall: null,
      nan: null,
      crash: null,
      slowSteps: [{ rank: 0, step: 5 }],
      memory: { peakReservedMiB: 412 },
      dumps: [
        {
          kind: 'signal',
          signal: 10,
          mainThreadTop: { function: 'grouped_selection_attention_packed', line: 298 },
        },
      ],
      skippedLines: 0,
    });
  });

  it('human report on nan, and --log adds a stdout file', async () => {
    const { out, code } = await analyze([`${FIX}/nan`]);
    expect(code).toBe(1);
    expect(out).toContain('verdict: NAN');
    expect(out).toContain('nan: rank 0, step 3');
    expect(out).toContain('loss explosion: step 2');
    const dir = mkdtempSync(join(tmpdir(), 'nsa-dbg-cli-'));
    const log = join(dir, 'captured.txt');
    writeFileSync(log, 'step 0001 | loss 5.5000 | lr 1.00e-04 | toks/s 80\n{\n  "steps": 1\n}\n== exit 0\n');
    const pass = await analyze([dir, '--log', log, '--json']);
    expect(JSON.parse(pass.out).verdict).toBe('pass');
    expect(pass.code).toBe(0);
  });

  it('slow (finished, its checked silences busy) exits 0 like a pass: the real H100 seq-check run', async () => {
    const { out, code } = await analyze([join(FIX, '..', 'h100-nsa-vibe-seq'), '--json']);
    expect(JSON.parse(out).verdict).toBe('slow');
    expect(code).toBe(0);
  });

  it('missing folder: clear error on stderr, exit 2', async () => {
    const { out, err, code } = await analyze(['/no/such/run', '--json']);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toContain('not a directory: /no/such/run');
  });

  it('formatReport is a pure function of the result', async () => {
    const { out } = await analyze([`${FIX}/batched`, '--json']);
    const text = formatReport(JSON.parse(out));
    expect(text).toContain('verdict: INCOMPLETE');
    expect(text).toContain('exit status: 137 (killed)');
    expect(text).toContain('slow step: rank 0, step 5: 26.4 s');
    expect(text).toContain('grouped_selection_attention_packed');
  });

  it.skipIf(!existsSync('dist/src/cli/main.js') || !existsSync('bin/nsa-dbg'))(
    'the built binary gives the same exit statuses',
    () => {
      const ok = spawnSync(process.execPath, ['bin/nsa-dbg', 'analyze', `${FIX}/batched`, '--json'], {
        encoding: 'utf8',
      });
      expect(ok.status).toBe(1);
      expect(JSON.parse(ok.stdout).verdict).toBe('incomplete');
      const missing = spawnSync(process.execPath, ['bin/nsa-dbg', 'analyze', '/no/such/run'], {
        encoding: 'utf8',
      });
      expect(missing.status).toBe(2);
      expect(missing.stderr).toContain('not a directory');
    },
  );
});
