import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { type Document, isMap, isSeq, LineCounter, parseDocument } from 'yaml';
import { packageRoot } from '../util/package-root.js';
import { type Lane, LaneError, validateLane } from './lane.js';

/**
 * Where lanes come from, later folders overriding earlier ones by name: the bundled presets/, the
 * user's config dir ($XDG_CONFIG_HOME/nsa-dbg/presets or ~/.config/nsa-dbg/presets), then the
 * project's ./.nsa-dbg/presets (so a repo can pin its own lanes).
 */
export function laneDirs(cwd = process.cwd(), env = process.env): string[] {
  const configHome = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return [
    join(packageRoot(), 'presets'),
    join(configHome, 'nsa-dbg', 'presets'),
    join(cwd, '.nsa-dbg', 'presets'),
  ];
}

/** a lane file that could not be loaded: the names it would have given, and why */
export interface BrokenLaneFile {
  file: string;
  /** the file's stem, and its `name:` when that much could be read */
  names: string[];
  error: LaneError;
}

/**
 * The lanes by name, with what the loading found besides: files that are broken (skipped, so one
 * bad file never takes the others down) and which file overrides which.
 */
export class LaneSet extends Map<string, Lane> {
  readonly broken: BrokenLaneFile[] = [];
  /** lane name → the files of that name it replaced, earliest first */
  readonly overridden = new Map<string, string[]>();
  /** names whose newest file is broken: using them is an error, never a fall back to an older file */
  readonly brokenByName = new Map<string, BrokenLaneFile>();
}

/** the yaml library's message without its " at line N, column M:" and the code frame after it */
function yamlMessage(e: { message: string }): string {
  return (e.message.split('\n')[0] ?? 'cannot parse').replace(/ at line \d+, column \d+:?$/, '');
}

/** the top-level key whose value holds `offset` (the last one starting before it) */
function topLevelKeyAt(text: string, offset: number): string {
  let key = '(root)';
  const re = /^([A-Za-z_][\w-]*)\s*:/gm;
  for (let m = re.exec(text); m !== null && m.index < offset; m = re.exec(text)) key = m[1]!;
  return key;
}

/** where `field` (`detector.k`, `phases[0].steps`, `env.A`) is written in the document */
function fieldOffset(doc: Document, field: string): number | undefined {
  const path = field.split(/\.|\[(\d+)\]/).filter((p) => p !== undefined && p !== '');
  let node: unknown = doc.contents;
  let at: number | undefined;
  for (const seg of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === seg);
      if (!pair) break;
      at = (pair.key as { range?: [number, number, number] }).range?.[0] ?? at;
      node = pair.value;
    } else if (isSeq(node) && /^\d+$/.test(seg)) {
      const item = node.items[Number(seg)] as { range?: [number, number, number] } | undefined;
      if (!item) break;
      at = item.range?.[0] ?? at;
      node = item;
    } else break;
  }
  return at;
}

/** One lane file. A broken one throws a LaneError naming the file, the field and the position. */
export function loadLaneFile(file: string): Lane {
  const text = readFileSync(file, 'utf8');
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const err = doc.errors[0];
  if (err) {
    throw new LaneError(file, topLevelKeyAt(text, err.pos[0]), yamlMessage(err), lines.linePos(err.pos[0]));
  }
  try {
    return validateLane(doc.toJS(), file);
  } catch (e) {
    if (!(e instanceof LaneError) || e.at) throw e;
    const offset = fieldOffset(doc, e.field);
    if (offset === undefined) throw e;
    throw new LaneError(e.file, e.field, e.detail, lines.linePos(offset));
  }
}

/** the names a file would give: its stem, and the `name:` it declares if that can be read */
function namesOf(file: string): string[] {
  const names = new Set([basename(file).replace(/\.ya?ml$/, '')]);
  try {
    const m = /^name:\s*["']?([a-z0-9][a-z0-9._-]*)["']?\s*$/m.exec(readFileSync(file, 'utf8'));
    if (m) names.add(m[1]!);
  } catch {
    // unreadable: the stem is all there is
  }
  return [...names];
}

/** All lanes by name. A broken file is recorded in `broken` and skipped; it never throws. */
export function loadLanes(dirs = laneDirs()): LaneSet {
  const out = new LaneSet();
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    let files: string[];
    try {
      files = readdirSync(dir)
        .filter((f) => /\.ya?ml$/.test(f))
        .sort();
    } catch {
      continue;
    }
    for (const f of files) {
      const file = join(dir, f);
      let p: Lane;
      try {
        p = loadLaneFile(file);
      } catch (e) {
        const error =
          e instanceof LaneError
            ? e
            : new LaneError(file, '(file)', (e as Error).message.replace(/^[A-Z]+: /, ''));
        const broken = { file, names: namesOf(file), error };
        out.broken.push(broken);
        for (const n of broken.names) {
          out.delete(n);
          out.brokenByName.set(n, broken);
        }
        continue;
      }
      const before = out.get(p.name);
      if (before) out.overridden.set(p.name, [...(out.overridden.get(p.name) ?? []), before.source]);
      out.brokenByName.delete(p.name);
      out.set(p.name, p);
    }
  }
  return out;
}

/**
 * The lane called `name`. A name whose file is broken throws that file's LaneError (path, field,
 * position); a name nobody defines says which names there are.
 */
export function getLane(lanes: Map<string, Lane>, name: string): Lane {
  const p = lanes.get(name);
  if (p) return p;
  const broken = lanes instanceof LaneSet ? lanes.brokenByName.get(name) : undefined;
  if (broken) throw broken.error;
  const names = [...lanes.keys()].sort().join(', ');
  throw new Error(`unknown lane "${name}". Known lanes: ${names}`);
}

/**
 * One line per broken lane file, for stderr or a notice. `except`: lanes about to be used, whose
 * own error says it (a file is told once, not as a warning and then as the error).
 */
export function brokenLaneLines(lanes: Map<string, Lane>, except: readonly string[] = []): string[] {
  if (!(lanes instanceof LaneSet)) return [];
  return lanes.broken
    .filter((b) => !b.names.some((n) => except.includes(n) && lanes.brokenByName.get(n) === b))
    .map((b) => `lane file skipped: ${b.error.message}`);
}
