/**
 * Loads an ssh_config file with its `Include`s spliced in. The `ssh-config` package parses one file
 * and leaves `Include` as a plain value, so the splicing happens here, on the parsed lines, for one
 * queried alias: an Include inside a `Host` block whose patterns do not match the alias is skipped
 * (OpenSSH never matches anything in it); inside a matching block the included file's leading
 * directives stay under that block and its own Host blocks follow. Relative Include paths are taken
 * from ~/.ssh (user config), globs are expanded and sorted like glob(3).
 */

import { readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import SSHConfig, { type Directive, type Line, LineType, type Section, glob as sshGlob } from 'ssh-config';

const MAX_INCLUDE_DEPTH = 16;

export function directiveValues(value: Directive['value']): string[] {
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
  return value.map((v) => v.val);
}

export function expandTilde(path: string, home: string): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  return path;
}

function globSegmentRegex(segment: string): RegExp {
  const re = segment
    .replace(/[\\^$.|+()[\]{}]/g, '\\$&')
    .replace(/\*/g, '[^/]*')
    .replace(/\?/g, '[^/]');
  return new RegExp(`^${re}$`);
}

/** Expand `*` and `?` in any path segment; a pattern without wildcards is returned as is. */
export function expandGlob(pattern: string): string[] {
  if (!/[*?]/.test(pattern)) return [pattern];
  let bases = [pattern.startsWith('/') ? '/' : '.'];
  for (const segment of pattern.split('/').filter((s) => s !== '')) {
    if (!/[*?]/.test(segment)) {
      bases = bases.map((base) => join(base, segment));
      continue;
    }
    const re = globSegmentRegex(segment);
    // like glob(3): a wildcard does not match a leading dot
    const matches = (name: string) => (!name.startsWith('.') || segment.startsWith('.')) && re.test(name);
    bases = bases.flatMap((base) => {
      try {
        return readdirSync(base)
          .sort()
          .filter(matches)
          .map((name) => join(base, name));
      } catch {
        return [];
      }
    });
  }
  return bases;
}

function isSection(line: Line): line is Section {
  return line.type === LineType.DIRECTIVE && 'config' in line;
}

function isInclude(line: Line): boolean {
  return line.type === LineType.DIRECTIVE && line.param.toLowerCase() === 'include';
}

function emptyLike(section: Section): Section {
  return { ...section, config: new SSHConfig() };
}

export interface LoadContext {
  alias: string;
  home: string;
  /** folder relative Include paths are taken from */
  includeDir: string;
}

/** the lines of the files an Include names, in order, each with its own Includes spliced in */
function included(line: Line, ctx: LoadContext, depth: number): Line[] {
  if (line.type !== LineType.DIRECTIVE) return [];
  return directiveValues(line.value).flatMap((raw) => {
    const expanded = expandTilde(raw, ctx.home);
    const path = isAbsolute(expanded) ? expanded : join(ctx.includeDir, expanded);
    return expandGlob(path).flatMap((file) => readIncluded(file, ctx, depth));
  });
}

function readIncluded(file: string, ctx: LoadContext, depth: number): Line[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return []; // OpenSSH ignores Include targets that do not exist
  }
  return flatten(SSHConfig.parse(text), ctx, depth + 1);
}

function flatten(parsed: readonly Line[], ctx: LoadContext, depth: number): Line[] {
  if (depth > MAX_INCLUDE_DEPTH) throw new Error('ssh config: Include nested too deeply');
  const out: Line[] = [];
  for (const line of parsed) {
    if (isInclude(line)) {
      out.push(...included(line, ctx, depth));
      continue;
    }
    if (!isSection(line) || !line.config.some(isInclude)) {
      out.push(line);
      continue;
    }
    const isHost = line.param.toLowerCase() === 'host';
    const active = !isHost || sshGlob(directiveValues(line.value), ctx.alias);
    let current = emptyLike(line);
    for (const sub of line.config) {
      if (!isInclude(sub)) {
        current.config.push(sub);
        continue;
      }
      if (!active) continue;
      const inner = included(sub, ctx, depth);
      const firstSection = inner.findIndex(isSection);
      const leading = firstSection < 0 ? inner : inner.slice(0, firstSection);
      current.config.push(...leading);
      if (firstSection >= 0) {
        out.push(current, ...inner.slice(firstSection));
        current = emptyLike(line); // the rest of the outer block keeps its own condition
      }
    }
    out.push(current);
  }
  return out;
}

/** Parse `text` (the file at includeDir/…) with every Include spliced in for ctx.alias. */
export function loadConfigText(text: string, ctx: LoadContext): SSHConfig {
  const conf = new SSHConfig();
  conf.push(...flatten(SSHConfig.parse(text), ctx, 0));
  return conf;
}
