/**
 * The layer order, checked over the imports of every source file: a folder imports only folders
 * below it, never one beside it or above it, so no import circle can form between folders. And the
 * engine (`src/`) never imports React or Ink: `panels/` are views of its state.
 *
 *   util < ingest, targets, lanes < analysis < runs < hosts, slurm, preflight < launch < session
 *   < notebook < bisect < report < cli < panels
 *
 * (src/lanes/ reads the lane files; the top-level presets/ folder holds them, as the design card
 * names it.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const LAYERS: string[][] = [
  ['util'],
  ['ingest', 'targets', 'lanes'],
  ['analysis'],
  ['runs'],
  ['hosts', 'slurm', 'preflight'],
  ['launch'],
  ['session'],
  ['notebook'],
  ['bisect'],
  ['report'],
  ['cli'],
  ['panels'],
];
const levelOf = new Map(LAYERS.flatMap((g, i) => g.map((f) => [f, i] as const)));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.tsx?$/.test(e.name) ? [p] : [];
  });
}

/** `src/runs/x.ts` → runs; `panels/a/b.tsx` → panels; a file at src/'s top → null */
function folderOf(file: string): string | null {
  const parts = relative(ROOT, file).split(/[\\/]/);
  if (parts[0] === 'panels') return 'panels';
  return parts[0] === 'src' && parts.length > 2 ? parts[1]! : null;
}

/** every module a file names: static imports, `export … from`, type imports, `import()` */
function specifiersOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s*['"]([^'"]+)['"]/g))
    out.push(m[1]!);
  for (const m of text.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)) out.push(m[1]!);
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1]!);
  return out;
}

interface Edge {
  file: string;
  from: string;
  to: string;
}

function edges(): { edges: Edge[]; engineUi: string[]; unplaced: string[] } {
  const out: Edge[] = [];
  const engineUi: string[] = [];
  const unplaced = new Set<string>();
  for (const file of [...sources(join(ROOT, 'src')), ...sources(join(ROOT, 'panels'))]) {
    const from = folderOf(file);
    const text = readFileSync(file, 'utf8');
    for (const spec of specifiersOf(text)) {
      if (from !== null && from !== 'panels' && /^(react|ink)(\/|$)|^ink-/.test(spec))
        engineUi.push(`${relative(ROOT, file)} imports ${spec}`);
      if (!spec.startsWith('.')) continue;
      const to = folderOf(resolve(dirname(file), spec));
      if (from === null || to === null || to === from) continue;
      for (const f of [from, to]) if (!levelOf.has(f)) unplaced.add(f);
      out.push({ file: relative(ROOT, file), from, to });
    }
  }
  return { edges: out, engineUi, unplaced: [...unplaced] };
}

describe('the layer order over the imports', () => {
  const found = edges();

  it('reads the imports it checks (the check cannot pass on nothing)', () => {
    expect(found.edges.length).toBeGreaterThan(200);
    expect(found.edges).toContainEqual({ file: 'src/session/session.ts', from: 'session', to: 'runs' });
    expect(specifiersOf("import type { A } from '../a.js';\nexport { b } from './b.js';")).toEqual([
      '../a.js',
      './b.js',
    ]);
    expect(specifiersOf("const m = await import('../late.js');")).toEqual(['../late.js']);
  });

  it('every folder has its place in the order', () => {
    expect(found.unplaced).toEqual([]);
  });

  it('no import points up or sideways', () => {
    const wrong = found.edges
      .filter((e) => levelOf.get(e.to)! >= levelOf.get(e.from)!)
      .map((e) => `${e.file}: ${e.from} → ${e.to}`);
    expect(wrong).toEqual([]);
  });

  it('the engine never imports React or Ink', () => {
    expect(found.engineUi).toEqual([]);
  });
});
