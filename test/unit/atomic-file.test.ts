/**
 * One atomic write on this machine (src/util/atomic-file.ts): whole files or none, one temp-name
 * scheme that run folders' readers know as temporary, and no other module renames files into place
 * (the notebook lock's takeover too writes its lock through it).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isTempFile } from '../../src/ingest/run-files.js';
import { atomicTempName, isTempNameOf, writeFileAtomic } from '../../src/util/atomic-file.js';

const ROOT = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'nsa-dbg-atomic-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sources(d: string): string[] {
  return readdirSync(d, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(d, e.name)) : /\.tsx?$/.test(e.name) ? [join(d, e.name)] : [],
  );
}

describe('one atomic write', () => {
  it('replaces a file whole, durable or not, text or bytes, and leaves no temp file', () => {
    const f = join(dir, 'exit_code');
    writeFileAtomic(f, '0\n');
    writeFileAtomic(f, Buffer.from('137\n'), { durable: false });
    expect(readFileSync(f, 'utf8')).toBe('137\n');
    expect(readdirSync(dir)).toEqual(['exit_code']);
  });

  it('its temp names are unique and read as temporary by the run-folder reader', () => {
    const names = new Set(Array.from({ length: 1000 }, () => atomicTempName(join(dir, 'metrics.json'))));
    expect(names.size).toBe(1000);
    for (const n of [...names].slice(0, 5)) expect(isTempFile(n.slice(dir.length + 1))).toBe(true);
  });

  it("a file's temp names are told from those of a file whose name extends it (the notebook's lock)", () => {
    const nb = join(dir, 'nb.json');
    const base = (p: string) => p.slice(dir.length + 1);
    expect(isTempNameOf(nb, base(atomicTempName(nb)))).toBe(true);
    expect(isTempNameOf(nb, base(atomicTempName(`${nb}.lock`)))).toBe(false);
    expect(isTempNameOf(nb, '.nb.json.99999.x.tmp')).toBe(true);
    expect(isTempNameOf(nb, '.nb.json.tmp')).toBe(false);
  });

  it('a write that cannot happen throws and leaves the old file and no temp file', () => {
    const f = join(dir, 'state.json');
    writeFileAtomic(f, '{"a":1}\n');
    expect(() => writeFileAtomic(join(dir, 'missing-folder', 'x.json'), 'x')).toThrow(/ENOENT/);
    expect(readFileSync(f, 'utf8')).toBe('{"a":1}\n');
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('no other module renames a file into place', () => {
    const renamers = sources(join(ROOT, 'src'))
      .filter((f) => /\brename(?:Sync)?\s*\(/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f).split('\\').join('/'));
    expect(renamers).toEqual(['src/util/atomic-file.ts']);
  });
});
