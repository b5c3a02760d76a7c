/**
 * The session's target for a `--hosts` run. The cell's folder, the probe file and everything nsa-dbg
 * writes about the run are on this machine (the base target); each host has its own SSH target, and
 * a worker pid's /proc and signals go to the host that runs it (by the ranks' node records, so equal
 * pids on two hosts are never confused).
 */
import { NodeRoutedTarget } from '../targets/node-routed.js';
import type { Target } from '../targets/target.js';
import { type HostEntry, safeAlias } from './hosts.js';

export interface HostConnection {
  alias: string;
  target: Target;
}

export class HostsTarget extends NodeRoutedTarget {
  constructor(
    base: Target,
    readonly hosts: HostConnection[],
    nodeOf: (pid: number) => string | null = () => null,
  ) {
    super(
      base,
      async (node, argv) => {
        const h = hosts.find((c) => c.alias === node || safeAlias(c.alias) === node);
        return h ? h.target.exec(argv, { timeoutMs: 30_000 }) : null;
      },
      nodeOf,
      () => `hosts ${hosts.map((h) => h.alias).join(',')}`,
      hosts.map((h) => h.alias).join(','),
    );
  }

  /** this machine, where the cell's folder is */
  get local(): Target {
    return this.base;
  }

  /** the same hosts, with worker pids routed by `nodeOf` (the run's node records) */
  routed(nodeOf: (pid: number) => string | null): HostsTarget {
    return new HostsTarget(this.base, this.hosts, nodeOf);
  }

  /** the connection of a host of the run */
  of(h: Pick<HostEntry, 'alias'>): Target {
    const c = this.hosts.find((x) => x.alias === h.alias);
    if (!c) throw new Error(`no connection to ${h.alias}`);
    return c.target;
  }

  override async close(): Promise<void> {
    await Promise.all([this.base.close(), ...this.hosts.map((h) => h.target.close())]);
  }
}

/** the connections of a `--hosts` run (its session's target is one) */
export function hostsTargetOf(t: Target): HostsTarget {
  if (!(t instanceof HostsTarget)) throw new Error('a --hosts run needs a connection to each host');
  return t;
}

/** one connection per host, made in turn: all or none (a failure closes those already made) */
export async function connectEach<C extends HostConnection>(
  aliases: readonly string[],
  connect: (alias: string) => Promise<C>,
): Promise<C[]> {
  const conns: C[] = [];
  try {
    for (const alias of aliases) conns.push(await connect(alias));
  } catch (e) {
    await Promise.all(conns.map((c) => c.target.close()));
    throw e;
  }
  return conns;
}
