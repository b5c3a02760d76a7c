import type { Session } from '../session/session.js';
import { type HostsArgs, openHostsSession } from './open-hosts.js';
import {
  localMirrorDir,
  type OpenOptions,
  openLocalSession,
  openRemoteSession,
  remoteHome,
} from './open-session.js';
import { connectFromArgs, type HostArgs } from './remote.js';

export interface Opened {
  session: Session;
  /** where the evidence ends up on this machine, for a run dir */
  localDirOf: (runDir: string, runId: string) => string;
  /** the target's label ("local" or user@host) */
  label: string;
}

/** local unless --host is given (one SSH connection carries everything) or --hosts (one per host) */
export async function openFromArgs(a: HostArgs & Partial<HostsArgs>, o: OpenOptions): Promise<Opened> {
  if (a.hosts) {
    const { session, label } = await openHostsSession({ ...a, hosts: a.hosts }, o);
    // the run dir is the cell's folder here: its evidence is where it runs
    return { session, localDirOf: (d) => d, label };
  }
  if (!a.host) return { session: openLocalSession(o), localDirOf: (d) => d, label: 'local' };
  let session: Session | null = null;
  const target = await connectFromArgs(a, () => session);
  const home = await remoteHome(target);
  session = openRemoteSession(target, home, o);
  return {
    session,
    localDirOf: (_d, id) => localMirrorDir(target.label, id),
    label: target.label,
  };
}
