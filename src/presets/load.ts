import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { packageRoot } from '../util/package-root.js';
import { type Preset, PresetError, validatePreset } from './preset.js';

/**
 * Where lanes come from, later folders overriding earlier ones by name: the bundled presets/, the
 * user's config dir ($XDG_CONFIG_HOME/nsa-dbg/presets or ~/.config/nsa-dbg/presets), then the
 * project's ./.nsa-dbg/presets (so a repo can pin its own lanes).
 */
export function presetDirs(cwd = process.cwd(), env = process.env): string[] {
  const configHome = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return [
    join(packageRoot(), 'presets'),
    join(configHome, 'nsa-dbg', 'presets'),
    join(cwd, '.nsa-dbg', 'presets'),
  ];
}

export function loadPresetFile(file: string): Preset {
  let doc: unknown;
  try {
    doc = parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new PresetError(file, '(yaml)', (e as Error).message.split('\n')[0] ?? 'cannot parse');
  }
  return validatePreset(doc, file);
}

/** All lanes by name. An invalid file throws a PresetError naming the file and the field. */
export function loadPresets(dirs = presetDirs()): Map<string, Preset> {
  const out = new Map<string, Preset>();
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    const files = readdirSync(dir)
      .filter((f) => /\.ya?ml$/.test(f))
      .sort();
    for (const f of files) {
      const p = loadPresetFile(join(dir, f));
      out.set(p.name, p);
    }
  }
  return out;
}

export function getPreset(presets: Map<string, Preset>, name: string): Preset {
  const p = presets.get(name);
  if (!p) {
    const names = [...presets.keys()].sort().join(', ');
    throw new Error(`unknown lane "${name}". Known lanes: ${names}`);
  }
  return p;
}
