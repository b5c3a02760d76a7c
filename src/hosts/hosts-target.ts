/**
 * The session's target for a `--hosts` run. The cell's folder, the probe file and everything nsa-dbg
 * writes about the run are on this machine (the base target); each host has its own SSH target, and
 * a worker pid's /proc and signals go to the host that runs it (by the ranks' node records, so equal
 * pids on two hosts are never confused).
 */
import { NodeRoutedTarget } from '../slurm/srun-target.js';
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

export function isHostsTarget(t: Target): t is HostsTarget {
  return t instanceof HostsTarget;
}
