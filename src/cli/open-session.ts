import { loadPresets } from '../presets/load.js';
import { demoShimPath } from '../runs/build-spec.js';
import { Session } from '../session/session.js';
import { LocalTarget } from '../targets/local.js';

export interface OpenOptions {
  lane: string;
  steps?: number;
  demo: boolean;
  stepMs?: number;
  command?: string[];
  runsRoot?: string;
  outDir?: string;
  cwd?: string;
  publishMs?: number;
}

/** A Session on this machine. The demo points the GPU panel at the simulated nvidia-smi. */
export function openLocalSession(o: OpenOptions): Session {
  const presets = loadPresets();
  const target = new LocalTarget();
  const spec = {
    steps: o.steps,
    command: o.command,
    demo: o.demo ? { stepMs: o.stepMs } : undefined,
    runsRoot: o.runsRoot,
    outDir: o.outDir,
    cwd: o.cwd,
  };
  return new Session({
    target,
    presets,
    lane: o.lane,
    spec,
    smi: (outDir) => (o.demo ? ['python3', demoShimPath(), '--demo-run-dir', outDir] : ['nvidia-smi']),
    simulated: o.demo,
    publishMs: o.publishMs,
    terminal: { cols: process.stdout.columns || 120, rows: process.stdout.rows || 40 },
  });
}
