/**
 * Where runs go and how a session for one is made: an Opener per place (this machine, one box over
 * SSH, several hosts: open-hosts.ts), made once from the command line and asked for a session per
 * run (`run`, `demo` and `attach` open one; the notebook and `bisect` one per cell). What is
 * launched there (a PTY, detached, a Slurm job, an agent per host) is the spec's launch kind.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import type { Lane } from '../lanes/lane.js';
import { loadLanes } from '../lanes/load.js';
import { kindOf } from '../launch/kinds.js';
import { DEMO_DIR_IN_RUN, demoShimPath } from '../runs/build-spec.js';
import type { LaunchSpec } from '../runs/launch-spec.js';
import type { RunSpec } from '../runs/launcher.js';
import { mirrorFollower } from '../runs/mirror-follower.js';
import { Session } from '../session/session.js';
import type { LinkView, SessionOptions } from '../session/session-options.js';
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
  /** the demo's simulated nodes (`--nodes M`): the ranks spread over M, each asked as a node */
  nodes?: number;
  command?: string[];
  /** where run dirs go on the machine that runs them (`--runs-dir`) */
  runsRoot?: string;
  /**
   * where each run's folder goes on this machine (a notebook's evidence folder): a local run's dir,
   * a remote run's mirror, a `--hosts` cell, as `<evidenceRoot>/<run id>`
   */
  evidenceRoot?: string;
  outDir?: string;
  cwd?: string;
  publishMs?: number;
  /** re-attach to this run dir instead of starting a run */
  attachRunDir?: string;
  /** `attachRunDir` is a finished run's folder on this machine: read to its end, nothing live */
  replay?: boolean;
  /** lanes to run from (the notebook passes a lane with a cell's edited env); default: loadLanes() */
  lanes?: Map<string, Lane>;
}

/** A place runs go, made once; a session for each run. */
export interface Opener {
  /** where runs go, as a cell records it: `local`, `user@host`, `slurm:local`, `node-a,node-b` */
  readonly label: string;
  /** what besides the label shapes a run here (a Slurm job's nodes and options), for trial keys */
  readonly launchKey?: Record<string, unknown>;
  open(o: OpenOptions): Session;
  /** the one box it reaches over SSH and that login's home (`--host`), for a box check to reuse */
  readonly box?: { target: Target; home: string };
  /** the connections, once no session needs them */
  close(): Promise<void>;
}

/**
 * A place's Opener: each run's session gets the options every place shares (lanes, steps, the
 * command, the demo, the terminal) and what `own` adds for the place; `sink`, when given, is told
 * which session is current (its link state goes there).
 */
function placeOpener(
  launch: LaunchSpec,
  target: Target,
  sink: LinkSink | undefined,
  own: (o: OpenOptions) => Omit<SessionOptions, 'target' | 'lanes' | 'lane' | 'simulated' | 'spec'> & {
    spec: Pick<SessionOptions['spec'], 'demo' | 'runsRoot' | 'cwd'>;
  },
): Opener {
  const place = kindOf(launch).place(launch, target.label);
  return {
    label: place.label,
    ...(place.key ? { launchKey: place.key } : {}),
    open: (o) => {
      const { spec, ...rest } = own(o);
      const session = new Session({
        lanes: o.lanes ?? loadLanes(),
        lane: o.lane,
        spec: { steps: o.steps, command: o.command, outDir: o.outDir, ...spec, launch },
        simulated: o.demo,
        publishMs: o.publishMs,
        terminal: { cols: process.stdout.columns || 120, rows: process.stdout.rows || 40 },
        attachRunDir: o.attachRunDir,
        replay: o.replay,
        target,
        ...rest,
      });
      if (sink) sink.current = session;
      return session;
    },
    close: () => target.close(),
  };
}

/**
 * This machine: a PTY per run, or a Slurm job (`launch`) submitted from here, the run dir the
 * evidence. `target`: what runs reach (a `--hosts` cell's connections when one is picked up again).
 */
export function localOpener(
  launch: LaunchSpec = { kind: 'pty' },
  target: Target = new LocalTarget(),
  sink?: LinkSink,
): Opener {
  return placeOpener(launch, target, sink, (o) => ({
    spec: {
      demo: o.demo ? { stepMs: o.stepMs, ranks: o.ranks, nodes: o.nodes } : undefined,
      runsRoot: o.runsRoot ?? o.evidenceRoot,
      cwd: o.cwd,
    },
    smi: (spec) =>
      o.demo || spec.demo ? ['python3', demoShimPath(), '--demo-run-dir', spec.outDir] : ['nvidia-smi'],
  }));
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

/** the SSH link's state goes to whichever session is current */
export interface LinkSink {
  current: Pick<Session, 'setConnection'> | null;
  report: (v: LinkView) => void;
}

export function linkSink(): LinkSink {
  const sink: LinkSink = { current: null, report: (v) => sink.current?.setConnection(v) };
  return sink;
}

/**
 * A remote box: runs start detached (tmux or setsid+nohup), or as a Slurm job submitted on it (a
 * login node); evidence is mirrored into a local folder as it arrives, and quitting leaves the run
 * running for `attach`.
 */
export function remoteOpener(
  target: Target,
  home: string,
  sink: LinkSink,
  launch: LaunchSpec = { kind: 'detached' },
  /** where run dirs go on the box (`--runs-dir`; default its ~/.nsa-dbg/runs) */
  runsRoot = defaultRemoteRunsRoot(home),
): Opener {
  return placeOpener(launch, target, sink, (o) => {
    const mirror = (spec: RunSpec) =>
      o.evidenceRoot ? join(o.evidenceRoot, spec.runId) : localMirrorDir(target.label, spec.runId);
    return {
      spec: {
        demo: o.demo ? { stepMs: o.stepMs, ranks: o.ranks, nodes: o.nodes, inRunDir: true } : undefined,
        runsRoot: o.runsRoot ?? runsRoot,
        cwd: o.cwd ?? home,
      },
      smi: (spec) =>
        o.demo || spec.demo
          ? ['python3', `${spec.runDir}/${DEMO_DIR_IN_RUN}/nvidia_smi_shim.py`, '--demo-run-dir', spec.outDir]
          : ['nvidia-smi'],
      prepareRun: o.demo ? (spec) => copyDemo(target, spec) : undefined,
      follower: (spec) => mirrorFollower(mirror(spec)),
      localDir: mirror,
    };
  });
}
