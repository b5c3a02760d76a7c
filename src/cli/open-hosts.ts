/**
 * `run --hosts A,B,…`: one SSH connection per host (each alias resolved like `--host`: ssh config,
 * known_hosts, agent), the rendezvous on the first host, and a session whose run dir is the cell's
 * folder on this machine (src/hosts/).
 */

import { parseHostList } from '../hosts/hosts.js';
import { HostsFollower } from '../hosts/hosts-follower.js';
import { followedHosts } from '../hosts/hosts-run.js';
import { type HostConnection, HostsTarget } from '../hosts/hosts-target.js';
import { loadPresets } from '../presets/load.js';
import { Session } from '../session/session.js';
import type { LinkView } from '../session/session-options.js';
import { DEFAULT_RDZV_PORT } from '../slurm/sbatch.js';
import { LocalTarget } from '../targets/local.js';
import type { Target } from '../targets/target.js';
import { defaultRemoteRunsRoot, type OpenOptions, remoteHome } from './open-session.js';
import { connectFromArgs, type HostArgs } from './remote.js';

export interface HostsArgs extends HostArgs {
  hosts: string;
  'rdzv-host'?: string;
  'rdzv-port'?: number;
  /** runs root on each host (default: its ~/.nsa-dbg/runs) */
  'runs-dir'?: string;
}

/**
 * The address the first host is reached on, as its own sshd saw it (`$SSH_CONNECTION`'s server
 * address): on a cluster network that is how the other hosts reach it too. `--rdzv-host` overrides.
 */
async function rendezvousHost(t: Target): Promise<string> {
  const r = await t.exec(['sh', '-c', 'set -- $SSH_CONNECTION; printf %s "$3"'], { timeoutMs: 15_000 });
  const addr = r.stdout.trim();
  if (addr) return addr.includes(':') ? `[${addr}]` : addr;
  const h = await t.exec(['hostname'], { timeoutMs: 15_000 });
  const name = h.stdout.trim();
  if (h.code !== 0 || !name) throw new Error(`cannot tell the address of ${t.label}: give --rdzv-host`);
  return name;
}

/** the worst of the hosts' links, for the header: one host down is the run's outage */
function linkAggregator(set: (v: LinkView) => void) {
  const links = new Map<string, LinkView>();
  const rank = { up: 0, reconnecting: 1, down: 2 } as const;
  return (alias: string, v: LinkView) => {
    links.set(alias, v);
    let worst: LinkView | null = null;
    for (const l of links.values()) if (worst === null || rank[l.state] > rank[worst.state]) worst = l;
    if (worst) set(worst);
  };
}

export async function openHostsSession(
  a: HostsArgs,
  o: OpenOptions,
): Promise<{ session: Session; label: string }> {
  const aliases = parseHostList(a.hosts);
  const presets = o.presets ?? loadPresets();
  const lane = presets.get(o.lane);
  // before connecting to every host: the lane must exist and start torchrun
  if (lane && !lane.launcher)
    throw new Error(
      `--hosts starts one torchrun agent per node: lane ${lane.name} has no launcher (add launcher: { torchrun: { nproc_per_node: G } } to it)`,
    );
  let session: Session | null = null;
  const report = linkAggregator((v) => session?.setConnection(v));
  const conns: Array<HostConnection & { home: string }> = [];
  try {
    for (const alias of aliases) {
      const target = await connectFromArgs({ ...a, host: alias }, () => ({
        setConnection: (v: LinkView) => report(alias, v),
      }));
      conns.push({ alias, target, home: await remoteHome(target) });
    }
  } catch (e) {
    await Promise.all(conns.map((c) => c.target.close()));
    throw e;
  }
  const rdzvHost = a['rdzv-host'] ?? (await rendezvousHost(conns[0]!.target));
  const local = new LocalTarget();
  const target = new HostsTarget(local, conns);
  session = new Session({
    target,
    presets,
    lane: o.lane,
    spec: {
      steps: o.steps,
      command: o.command,
      runsRoot: o.runsRoot,
      hosts: {
        hosts: conns.map((c) => ({
          alias: c.alias,
          runsRoot: a['runs-dir'] ?? defaultRemoteRunsRoot(c.home),
          cwd: o.cwd ?? c.home,
        })),
        rdzvEndpoint: `${rdzvHost}:${a['rdzv-port'] ?? DEFAULT_RDZV_PORT}`,
      },
    },
    smi: () => ['nvidia-smi'],
    // the GPU panel shows the first host's GPUs (the rendezvous host)
    gpuTarget: conns[0]!.target,
    simulated: false,
    publishMs: o.publishMs,
    terminal: { cols: process.stdout.columns || 120, rows: process.stdout.rows || 40 },
    // quitting stops every host's agent (the ladder acts on all of them), like a local run
    leaveRunningOnQuit: false,
    follower: (spec) => (_t, dir, onChunk) =>
      new HostsFollower(local, dir, followedHosts(target, spec), onChunk),
  });
  return { session, label: target.label };
}
