/**
 * Reading a run's command.json, whatever nsa-dbg version wrote it. Files of this version name their
 * launch kind (`launcher: { kind: 'pty' | 'detached' | 'slurm' | 'hosts', … }`) and their folder
 * layout; older ones are migrated as they are read:
 * - `launcher: { kind: 'torchrun', nprocPerNode, slurm?, hosts? }` (before launch kinds): the
 *   torchrun part becomes `torchrun`, a `slurm` or `hosts` part becomes that kind;
 * - no launch kind at all: detached when the run dir's launch.json says tmux or nohup, else a PTY;
 * - no `layout` (before layouts were recorded): the one its launch implied.
 * This is the one place that knows the old shapes; nothing else reads command.json directly.
 */
import { COMMAND_FILE, LAUNCH_FILE } from '../ingest/launcher-files.js';
import { agentsLayout, hostsLayout, type RunLayout } from '../ingest/run-files.js';
import type { Target } from '../targets/target.js';
import { parseJsonObject } from '../util/json-object.js';
import { LAUNCH_KINDS, type LaunchSpec, type TorchrunRun } from './launch-spec.js';
import type { RunSpec } from './launcher.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** the old `launcher: { kind: 'torchrun', … }`, its multi-node settings carrying `launcherWords` */
interface OldTorchrun {
  kind: 'torchrun';
  nprocPerNode?: number;
  slurm?: Obj & { launcherWords?: number };
  hosts?: Obj & { launcherWords?: number };
}

const isNewLaunch = (v: unknown): v is LaunchSpec =>
  isObj(v) && LAUNCH_KINDS.includes(v.kind as LaunchSpec['kind']);

/** the torchrun words before its own flags: torchrunArgv puts `--nproc_per_node` right after them */
function commandWordsOf(argv: unknown): number {
  const i = Array.isArray(argv) ? argv.indexOf('--nproc_per_node') : -1;
  return i > 0 ? i : 1;
}

function withoutWords(o: Obj): Obj {
  const { launcherWords: _w, ...rest } = o;
  return rest;
}

/** an old file's launch, from its torchrun settings and what launch.json says of a detached run */
function oldLaunch(old: OldTorchrun | undefined, launchInfo: unknown): LaunchSpec {
  if (old?.slurm) return { kind: 'slurm', ...withoutWords(old.slurm) } as LaunchSpec;
  if (old?.hosts) return { kind: 'hosts', ...withoutWords(old.hosts) } as LaunchSpec;
  const mode = isObj(launchInfo) ? launchInfo.mode : undefined;
  if (mode === 'tmux' || mode === 'nohup') return { kind: 'detached', mode };
  return { kind: 'pty' };
}

/** the folder layout an old file's launch implied (files of this version record theirs) */
function oldLayout(old: OldTorchrun | undefined): RunLayout {
  const n = old?.nprocPerNode ?? 1;
  if (old?.hosts) return hostsLayout(n);
  if (old?.slurm) return agentsLayout(n);
  return {};
}

/**
 * command.json's text → the run as this version describes it. `launchInfo`: the run dir's
 * launch.json, parsed (only an old file without a launch kind needs it). Throws on text that is not
 * a JSON object.
 */
export function parseRunSpec(text: string, launchInfo?: unknown): RunSpec {
  const raw = JSON.parse(text) as unknown;
  if (!isObj(raw)) throw new Error('command.json is not a JSON object');
  if (isNewLaunch(raw.launcher))
    return { ...raw, layout: isObj(raw.layout) ? raw.layout : {} } as unknown as RunSpec;
  const old =
    isObj(raw.launcher) && raw.launcher.kind === 'torchrun'
      ? (raw.launcher as unknown as OldTorchrun)
      : undefined;
  const multi = old?.slurm ?? old?.hosts;
  const torchrun: TorchrunRun | undefined = old
    ? {
        nprocPerNode: old.nprocPerNode ?? 1,
        commandWords:
          typeof multi?.launcherWords === 'number' ? multi.launcherWords : commandWordsOf(raw.argv),
      }
    : undefined;
  return {
    ...raw,
    launcher: oldLaunch(old, launchInfo),
    ...(torchrun ? { torchrun } : {}),
    layout: isObj(raw.layout) ? (raw.layout as RunLayout) : oldLayout(old),
  } as RunSpec;
}

/** the run in `runDir` on `target`, migrated; null when there is no command.json */
export async function readRunSpec(target: Target, runDir: string): Promise<RunSpec | null> {
  const b = await target.readFile(`${runDir}/${COMMAND_FILE}`);
  if (b === null) return null;
  const text = b.toString('utf8');
  const raw = parseJsonObject(text);
  // only an old command.json without a launch kind needs its launch.json
  const info =
    raw !== null && !isNewLaunch(raw.launcher)
      ? await target.readFile(`${runDir}/${LAUNCH_FILE}`).catch(() => null)
      : null;
  return parseRunSpec(text, info === null ? undefined : parseJsonObject(info.toString('utf8')));
}
