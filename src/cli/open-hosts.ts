/**
 * `--hosts A,B,…`: one SSH connection per host (each alias resolved like `--host`: ssh config,
 * known_hosts, agent), the rendezvous on the first host, and sessions whose run dir is the cell's
 * folder on this machine (src/hosts/). The same connections serve every run of a notebook.
 */

import { parseHostList } from '../hosts/hosts.js';
import { connectEach, HostsTarget } from '../hosts/hosts-target.js';
import { DEFAULT_RDZV_PORT, type LaunchSpec } from '../runs/launch-spec.js';
import type { LinkView } from '../session/session-options.js';
import { LocalTarget } from '../targets/local.js';
import type { Target } from '../targets/target.js';
import {
  defaultRemoteRunsRoot,
  type LinkSink,
  localOpener,
  type Opener,
  remoteHome,
} from './open-session.js';
import { connectFromArgs, type HostArgs } from './remote.js';
import type { TargetArgs } from './target-options.js';

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

/** connect to one host of a `--hosts` run, its link state reported with the others' */
export function hostConnector(a: HostArgs, sink: LinkSink): (alias: string) => Promise<Target> {
  const report = linkAggregator(sink.report);
  return (alias) => connectFromArgs({ ...a, host: alias }, (v) => report(alias, v));
}

/**
 * `--hosts`: the lane must start torchrun (checked before connecting to every host), then one
 * connection per host and the rendezvous address.
 */
export async function hostsOpener(
  a: TargetArgs & { hosts: string },
  sink: LinkSink,
  lane?: { name: string; launcher?: unknown },
): Promise<Opener> {
  const aliases = parseHostList(a.hosts);
  if (lane && !lane.launcher)
    throw new Error(
      `--hosts starts one torchrun agent per node: lane ${lane.name} has no launcher (add launcher: { torchrun: { nproc_per_node: G } } to it)`,
    );
  const connect = hostConnector(a, sink);
  const conns = await connectEach(aliases, async (alias) => {
    const target = await connect(alias);
    return { alias, target, home: await remoteHome(target) };
  });
  const rdzvHost = a['rdzv-host'] ?? (await rendezvousHost(conns[0]!.target));
  const target = new HostsTarget(new LocalTarget(), conns);
  const launch: LaunchSpec = {
    kind: 'hosts',
    hosts: conns.map((c) => ({
      alias: c.alias,
      runsRoot: a['runs-dir'] ?? defaultRemoteRunsRoot(c.home),
      cwd: a.cwd ?? c.home,
    })),
    rdzvEndpoint: `${rdzvHost}:${a['rdzv-port'] ?? DEFAULT_RDZV_PORT}`,
  };
  const base = localOpener(launch, target, sink);
  // with --hosts, --runs-dir is each host's: the cell's folder is here
  return { ...base, open: (o) => base.open({ ...o, runsRoot: undefined }) };
}
