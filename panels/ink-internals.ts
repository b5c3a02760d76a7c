/**
 * Ink's own build files, for the two patches written against Ink 6.8 (ink-fast-output.ts,
 * ink-text-caches.ts). Ink exports only its index, so a build file is imported by its URL beside
 * the index: the same module instance Ink itself uses. The version is read once.
 */
import { readFileSync } from 'node:fs';

let index: URL | null | undefined;

/** Ink's index when it is 6.8.x, else null */
function ink68(): URL | null {
  if (index !== undefined) return index;
  try {
    const at = new URL(import.meta.resolve('ink'));
    const pkg = JSON.parse(readFileSync(new URL('../package.json', at), 'utf8')) as { version?: string };
    index = /^6\.8\./.test(pkg.version ?? '') ? at : null;
  } catch {
    index = null;
  }
  return index;
}

/** the build file `name` (e.g. `output.js`) of Ink 6.8.x; null for another Ink or none */
export async function importInk68<T>(name: string): Promise<T | null> {
  const at = ink68();
  return at === null ? null : ((await import(new URL(`./${name}`, at).href)) as T);
}
