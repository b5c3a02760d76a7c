import { readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { loadPresets } from '../presets/load.js';
import type { Preset } from '../presets/preset.js';
import { DEMO_DIR_IN_RUN, demoShimPath, type SpecOptions } from '../runs/build-spec.js';
import type { RunSpec } from '../runs/launcher.js';
import { mirrorFollower } from '../runs/mirror-follower.js';
import { Session } from '../session/session.js';
import { LocalTarget } from '../targets/local.js';
import type { Target } from '../targets/target.js';
import { packageRoot } from '../util/package-root.js';

export interface OpenOptions {
  lane: string;
  steps?: number;
  demo: boolean;
  stepMs?: number;
  /** the demo's rank processes (`--ranks N`) */
  ranks?: number;
  command?: string[];
  runsRoot?: string;
  outDir?: string;
  cwd?: string;
  publishMs?: number;
  /** re-attach to this run dir instead of starting a run */
  attachRunDir?: string;
  /** lanes to run from (the notebook passes a lane with a cell's edited env); default: loadPresets() */
  presets?: Map<string, Preset>;
  /** submit as a Slurm job (`--slurm`) */
  slurm?: SpecOptions['slurm'];
}

function terminalSize() {
  return { cols: process.stdout.columns || 120, rows: process.stdout.rows || 40 };
}

/** A Session on this machine. The demo points the GPU panel at the simulated nvidia-smi. */
export function openLocalSession(o: OpenOptions): Session {
  return new Session({
    target: new LocalTarget(),
    presets: o.presets ?? loadPresets(),
    lane: o.lane,
    spec: {
      steps: o.steps,
      command: o.command,
      demo: o.demo ? { stepMs: o.stepMs, ranks: o.ranks } : undefined,
      runsRoot: o.runsRoot,
      outDir: o.outDir,
      cwd: o.cwd,
      slurm: o.slurm,
    },
    smi: (spec) => (o.demo ? ['python3', demoShimPath(), '--demo-run-dir', spec.outDir] : ['nvidia-smi']),
    simulated: o.demo,
    publishMs: o.publishMs,
    terminal: terminalSize(),
    attachRunDir: o.attachRunDir,
    // an attached local run was started detached by someone else, and a Slurm job outlives us
    // (`K` cancels it): leave them running
    leaveRunningOnQuit: !!o.attachRunDir || !!o.slurm,
  });
}

/** the remote login's home, so run dirs get absolute paths (SFTP does not expand ~) */
export async function remoteHome(target: Target): Promise<string> {
  const r = await target.exec(['sh', '-c', 'printf %s "$HOME"'], { timeoutMs: 15_000 });
  const home = r.stdout.trim();
  if (r.code !== 0 || !home.startsWith('/')) throw new Error(`cannot read $HOME on ${target.label}`);
  return home;
}

export function defaultRemoteRunsRoot(home: string): string {
  return `${home}/.nsa-dbg/runs`;
}

/** the local evidence folder a remote run is mirrored into */
export function localMirrorDir(targetLabel: string, runId: string, env = process.env): string {
  const base = env.NSA_DBG_HOME ?? join(env.HOME || homedir(), '.nsa-dbg');
  return join(base, 'mirror', targetLabel.replace(/[^\w.@-]/g, '_'), runId);
}

/** copy the bundled demo (trainer, its fake nsa package, the nvidia-smi shim) into the run dir */
async function copyDemo(target: Target, spec: RunSpec): Promise<void> {
  const root = join(packageRoot(), 'src', 'demo');
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((n) => {
      const p = join(d, n);
      if (n === '__pycache__') return [];
      return statSync(p).isDirectory() ? walk(p) : n.endsWith('.py') ? [p] : [];
    });
  for (const f of walk(root)) {
    await target.writeFile(`${spec.runDir}/${DEMO_DIR_IN_RUN}/${relative(root, f)}`, readFileSync(f));
  }
}

/**
 * A Session on a remote box: runs start detached (tmux or setsid+nohup), evidence is mirrored into
 * a local folder as it arrives, and quitting leaves the run running for `attach`.
 */
export function openRemoteSession(target: Target, home: string, o: OpenOptions): Session {
  const runsRoot = o.runsRoot ?? defaultRemoteRunsRoot(home);
  return new Session({
    target,
    presets: o.presets ?? loadPresets(),
    lane: o.lane,
    spec: {
      steps: o.steps,
      command: o.command,
      demo: o.demo ? { stepMs: o.stepMs, ranks: o.ranks, inRunDir: true } : undefined,
      runsRoot,
      outDir: o.outDir,
      cwd: o.cwd ?? home,
      slurm: o.slurm,
    },
    smi: (spec) =>
      o.demo || spec.demo
        ? ['python3', `${spec.runDir}/${DEMO_DIR_IN_RUN}/nvidia_smi_shim.py`, '--demo-run-dir', spec.outDir]
        : ['nvidia-smi'],
    simulated: o.demo,
    publishMs: o.publishMs,
    terminal: terminalSize(),
    detached: 'auto',
    leaveRunningOnQuit: true,
    attachRunDir: o.attachRunDir,
    prepareRun: o.demo ? (spec) => copyDemo(target, spec) : undefined,
    follower: (spec) => mirrorFollower(localMirrorDir(target.label, spec.runId)),
    localDir: (spec) => localMirrorDir(target.label, spec.runId),
  });
}
