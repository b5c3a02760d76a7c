import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/**
 * The installed package's root (where presets/ and src/demo/ ship). Found by walking up from this
 * module, so it is the same whether we run from dist/ or from the sources under vitest.
 */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).name === 'nsa-dbg') {
      cached = dir;
      return dir;
    }
    const up = dirname(dir);
    if (up === dir) throw new Error('nsa-dbg: cannot find the package root (package.json named nsa-dbg)');
    dir = up;
  }
}

export function packageVersion(): string {
  return JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')).version as string;
}
