/**
 * The launch kinds by name: a run's command.json names its kind (src/runs/launch-spec.ts), and
 * whoever needs to act on the run asks that kind (src/runs/launch-kind.ts). One table, no branches.
 */
import { hostsKind } from '../hosts/hosts-kind.js';
import { detachedKind } from '../runs/detached-kind.js';
import type { LaunchKind } from '../runs/launch-kind.js';
import type { LaunchKindName, LaunchSpec } from '../runs/launch-spec.js';
import { ptyKind } from '../runs/pty-kind.js';
import { slurmKind } from '../slurm/slurm-kind.js';

const KINDS: { [K in LaunchKindName]: LaunchKind<Extract<LaunchSpec, { kind: K }>> } = {
  pty: ptyKind,
  detached: detachedKind,
  slurm: slurmKind,
  hosts: hostsKind,
};

/** the implementation of a launch (the spec's `launcher`) */
export function kindOf(launch: LaunchSpec): LaunchKind {
  return KINDS[launch.kind] as unknown as LaunchKind;
}
