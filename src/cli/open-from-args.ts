/**
 * The command line's choice of where runs go and how they are launched, made into an Opener once:
 * this machine (a PTY per run), one box over `--host` (detached), either of them submitting Slurm
 * jobs (`--slurm`), or several hosts (`--hosts`). `run`, `demo`, the notebook and `bisect` take the
 * same options (target-options.ts); `attach` makes one for the run it picks up.
 */

import type { Lane } from '../lanes/lane.js';
import { kindOf } from '../launch/kinds.js';
import type { RunSpec } from '../runs/launcher.js';
import type { Target } from '../targets/target.js';
import { hostConnector, hostsOpener } from './open-hosts.js';
import {
  type LinkSink,
  linkSink,
  localOpener,
  type Opener,
  remoteHome,
  remoteOpener,
} from './open-session.js';
import { connectFromArgs } from './remote.js';
import { launchOfArgs, type TargetArgs } from './target-options.js';

export async function openerFromArgs(a: TargetArgs, lane?: Lane): Promise<Opener> {
  const sink = linkSink();
  if (a.hosts) return hostsOpener({ ...a, hosts: a.hosts }, sink, lane);
  const launch = launchOfArgs(a);
  if (!a.host) return localOpener(launch);
  const target = await connectFromArgs(a, sink.report);
  const home = await remoteHome(target);
  return { ...remoteOpener(target, home, sink, launch, a['runs-dir']), box: { target, home } };
}

/**
 * For `attach`: the place of a run found on `base` (this machine, or the box of `--host`), reached
 * the way its launch kind says (a `--hosts` cell: a new connection to each of its hosts).
 */
export async function openerForRun(
  a: TargetArgs,
  base: Target,
  home: string | null,
  spec: RunSpec,
  sink: LinkSink,
): Promise<Opener> {
  if (home !== null) return remoteOpener(base, home, sink, undefined, a['runs-dir']);
  const target = await kindOf(spec.launcher).reconnect(base, spec, hostConnector(a, sink));
  return localOpener(undefined, target, sink);
}
