/**
 * Runs the probe (probe.py) on a target with the lane's Python and env, and judges what it says.
 * On a remote box the probe (and, for the demo, the nvidia-smi stand-in) is copied into the runs
 * root's `.preflight/` first (`~/.nsa-dbg/runs/.preflight/`); here it runs from the package.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Lane } from '../lanes/lane.js';
import type { SlurmLaunch } from '../runs/launch-spec.js';
import { trainerOutDir } from '../runs/out-dir-of.js';
import { DEFAULT_STACK_SIGNAL } from '../runs/run-env.js';
import type { Target } from '../targets/target.js';
import { packageRoot } from '../util/package-root.js';
import { laneInterpreter, ranksOf, specOf } from './lane-ask.js';
import type { LaneAsk, ProbeOutput } from './types.js';
import { type BoxCheck, judgeBox } from './verdict.js';

export interface ProbeOptions {
  demo: boolean;
  /** the remote login's home (null: this machine) */
  home: string | null;
  runsRoot?: string;
  cwd?: string;
  outDir?: string;
  /** a launcher in front of the probe (`srun …`): each node it starts prints its own line */
  wrap?: string[];
}

/** `--slurm`: the probe on each node of an allocation like the run's, one task a node */
export function srunPrefix(l: Pick<SlurmLaunch, 'nodes' | 'partition' | 'time' | 'sbatchArgs'>): string[] {
  return [
    'srun',
    `--nodes=${l.nodes}`,
    '--ntasks-per-node=1',
    ...(l.partition ? [`--partition=${l.partition}`] : []),
    ...(l.time ? [`--time=${l.time}`] : []),
    ...l.sbatchArgs,
  ];
}

const FILES = [
  ['preflight', 'probe.py'],
  ['demo', 'nvidia_smi_shim.py'],
  ['demo', 'nvidia_smi_qlog.py'],
] as const;

/** where the probe and the shim are on the target: the package here, a copy beside the box's runs */
async function placeFiles(
  target: Target,
  home: string | null,
  runsRoot: string,
): Promise<{ probe: string; shim: string }> {
  const src = (d: string, f: string) => join(packageRoot(), 'src', d, f);
  if (home === null) return { probe: src('preflight', 'probe.py'), shim: src('demo', 'nvidia_smi_shim.py') };
  const dir = `${runsRoot}/.preflight`;
  for (const [d, f] of FILES) await target.writeFile(`${dir}/${f}`, readFileSync(src(d, f)));
  return { probe: `${dir}/probe.py`, shim: `${dir}/nvidia_smi_shim.py` };
}

/** The lane's Python could not run the probe at all: that alone makes the box NO-GO. */
function pythonFailed(python: string[], ask: LaneAsk, host: string, why: string): BoxCheck {
  const check = {
    id: 'python.runs',
    name: "the lane's Python runs",
    status: 'fail' as const,
    measured: why.trim().split('\n').slice(-3).join(' ').slice(0, 300),
    expected: `${python.join(' ')} runs a stdlib script`,
    source: `lane ${ask.lane}`,
  };
  return {
    go: false,
    verdict: 'NO-GO',
    reasons: [`fail: ${check.name}: ${check.measured}`],
    host,
    lane: ask.lane,
    probeS: 0,
    checks: [check],
  };
}

/** every probe line of the output (one per node under srun) */
export function probeLines(stdout: string): ProbeOutput[] {
  const out: ProbeOutput[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as ProbeOutput);
    } catch {
      // a line cut short (a node killed mid-write): that node is missing, which the count shows
    }
  }
  return out;
}

export async function checkBox(target: Target, lane: Lane, o: ProbeOptions): Promise<BoxCheck[]> {
  const cwd = o.cwd ?? o.home ?? process.cwd();
  // a box's runs go under its own home unless --runs-dir says (as a run's do: cli/open-session.ts)
  const runsRoot = o.runsRoot ?? (o.home === null ? undefined : `${o.home}/.nsa-dbg/runs`);
  const spec = specOf(lane, { demo: o.demo, runsRoot, cwd, outDir: o.outDir });
  const out = await trainerOutDir(target, spec, lane, o.outDir, o.home === null ? process.env : {});
  const ranks = ranksOf(lane, o.demo);
  const ask: LaneAsk = {
    lane: lane.name,
    ranksPerNode: ranks.n,
    ranksSource: ranks.source,
    stackSignal: lane.stackSignal ?? DEFAULT_STACK_SIGNAL,
    // the run's own folder is named when it starts: the runs root is where it will be
    runDir: dirname(spec.runDir),
    outDir: out.from === 'run dir' ? dirname(spec.runDir) : out.dir,
    outDirSource: out.from === 'config' ? `out_dir from ${out.config}` : `out_dir: the ${out.from}`,
  };
  const files = await placeFiles(target, o.home, dirname(spec.runDir));
  const python = laneInterpreter(lane, o.demo);
  const argv = [
    ...(o.wrap ?? []),
    ...python,
    files.probe,
    '--smi',
    JSON.stringify(o.demo ? ['python3', files.shim] : ['nvidia-smi']),
    '--dirs',
    JSON.stringify([ask.runDir, ask.outDir]),
    '--ranks',
    String(ranks.n),
    ...(o.demo ? ['--simulate', 'on'] : []),
  ];
  const r = await target
    // the probe's own limit: its measurements stop themselves well before
    .exec(argv, { cwd, env: spec.env, timeoutMs: 120_000 })
    .catch((e: Error) => ({ stdout: '', stderr: e.message, code: null }));
  // for captures (test/device/preflight.sh): the probe's raw lines, as the fixtures keep them
  if (process.env.NSA_DBG_PREFLIGHT_RAW) appendFileSync(process.env.NSA_DBG_PREFLIGHT_RAW, r.stdout);
  const probes = probeLines(r.stdout);
  if (probes.length === 0)
    return [pythonFailed(python, ask, target.label, r.stderr || `exit ${r.code ?? 'signal'} with no output`)];
  return probes.map((p) => judgeBox(p, ask));
}
