/**
 * Where the trainer writes its heartbeats and dumps, found without editing its config: the lane's
 * `outDir`, else the out_dir of the config the run's env names (`CONFIG` → `train.out_dir`, or the
 * known trainer's default config), else `--out-dir`, else the run dir. Relative paths are the
 * trainer's cwd's; OmegaConf's `${oc.env:VAR,default}` is resolved with the run's env.
 */
import { parse as parseYaml } from 'yaml';
import type { Lane } from '../lanes/lane.js';
import { trainerOf } from '../lanes/trainers.js';
import type { Target } from '../targets/target.js';
import type { RunSpec } from './launcher.js';

export interface OutDirChoice {
  dir: string;
  /** how it was found, for the header and the cell */
  from: 'lane' | 'config' | 'flag' | 'run dir';
  /** the config file (and key) it was read from */
  config?: string;
}

const absolute = (cwd: string, p: string) => (p.startsWith('/') ? p : `${cwd.replace(/\/+$/, '')}/${p}`);

/** `${oc.env:VAR,default}`, `${oc.env:VAR}` and `${a.b}` (another key of the same file); null: cannot */
export function resolveInterpolations(
  value: string,
  env: Record<string, string | undefined>,
  doc: unknown,
): string | null {
  let ok = true;
  const out = value.replace(/\$\{([^}]*)\}/g, (_, inner: string) => {
    const e = /^oc\.env:([A-Za-z_]\w*)(?:,(.*))?$/.exec(inner.trim());
    if (e !== null) {
      const v = env[e[1]!] ?? e[2]?.trim().replace(/^(['"])(.*)\1$/, '$2');
      if (v === undefined) ok = false;
      return v ?? '';
    }
    const ref = lookup(doc, inner.trim());
    if (typeof ref !== 'string' && typeof ref !== 'number') ok = false;
    return String(ref ?? '');
  });
  return ok ? out : null;
}

function lookup(doc: unknown, path: string): unknown {
  let cur = doc;
  for (const k of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

/**
 * The out_dir of a run about to start (spec built, nothing launched). `localEnv`: the environment
 * the trainer inherits when it runs here (a remote one's is not known: only the run's own env).
 */
export async function trainerOutDir(
  target: Target,
  spec: RunSpec,
  lane: Pick<Lane, 'outDir'>,
  flag: string | undefined,
  localEnv: Record<string, string | undefined> = {},
): Promise<OutDirChoice> {
  if (lane.outDir) return { dir: absolute(spec.cwd, lane.outDir), from: 'lane' };
  const env: Record<string, string | undefined> = {
    ...localEnv,
    ...spec.env,
    NSA_DBG_RUN_DIR: spec.runDir,
    NSA_DBG_OUT_DIR: spec.outDir,
  };
  const profile = trainerOf(spec.argv);
  const envName = profile?.config?.env ?? 'CONFIG';
  const configPath = env[envName] ?? profile?.config?.default;
  const key = profile?.config?.outDirKey ?? 'train.out_dir';
  if (configPath !== undefined && !spec.demo) {
    const text = await target.readFile(absolute(spec.cwd, configPath)).catch(() => null);
    if (text !== null) {
      let doc: unknown = null;
      try {
        doc = parseYaml(text.toString('utf8'));
      } catch {
        doc = null; // not YAML: the trainer will say so itself
      }
      const raw = lookup(doc, key);
      const value = typeof raw === 'string' ? resolveInterpolations(raw, env, doc) : null;
      if (value) return { dir: absolute(spec.cwd, value), from: 'config', config: `${key} of ${configPath}` };
    }
  }
  if (flag) return { dir: spec.outDir, from: 'flag' };
  return { dir: spec.runDir, from: 'run dir' };
}
