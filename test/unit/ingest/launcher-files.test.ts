import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  EXIT_CODE_FILE,
  exitCodeOf,
  PID_FILE,
  pidOf,
  readExitCode,
  readPid,
  shWriteWhole,
  tmpNameOf,
} from '../../../src/ingest/launcher-files.js';
import { shQuote } from '../../../src/util/sh-quote.js';

const dir = mkdtempSync(join(tmpdir(), 'nsa-dbg-launcher files '));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const read = (p: string) => readFile(p).catch(() => null);

describe('the launcher files: one owner of their names, their text and their writing', () => {
  it('the shell writes a value whole, through the temp name, into a folder whose name needs quoting', () => {
    execFileSync('sh', ['-c', `(exit 137); rc=$?; ${shWriteWhole(shQuote(dir), EXIT_CODE_FILE, '"$rc"')}`]);
    expect(readFileSync(join(dir, EXIT_CODE_FILE), 'utf8')).toBe('137\n');
    expect(existsSync(join(dir, tmpNameOf(EXIT_CODE_FILE)))).toBe(false);
    // the pid as the run script writes it: "$0" is the folder, $$ the shell that then execs
    const pid = execFileSync('sh', [
      '-c',
      `sh -c '${shWriteWhole('"$0"', PID_FILE, '$$')}; echo $$' ${shQuote(dir)}`,
    ])
      .toString()
      .trim();
    expect(readFileSync(join(dir, PID_FILE), 'utf8')).toBe(`${pid}\n`);
  });

  it('reads what was written, and nothing from a file that is absent, empty or not a number', async () => {
    expect(await readExitCode(read, dir)).toBe(137);
    expect(await readPid(read, dir)).toBeGreaterThan(1);
    const other = mkdtempSync(join(dir, 'x'));
    expect(await readExitCode(read, other)).toBeNull();
    expect(await readPid(read, other)).toBeNull();
    writeFileSync(join(other, EXIT_CODE_FILE), '');
    expect(await readExitCode(read, other)).toBeNull();
    for (const [text, code] of [
      ['0\n', 0],
      ['  1 \n', 1],
      ['-1\n', -1],
      ['12x\n', null],
      ['1.5', null],
      ['', null],
    ] as const)
      expect(exitCodeOf(text)).toBe(code);
    expect(pidOf('0\n')).toBeNull();
    expect(pidOf('-4')).toBeNull();
    expect(pidOf(Buffer.from('4242\n'))).toBe(4242);
  });
});
