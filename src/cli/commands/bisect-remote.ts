/**
 * A bisection's trials on a remote box: one SSH connection for every trial, each trial a detached
 * run whose evidence is mirrored here, judged as `run --headless --host` judges it.
 */
import type { CellSession, NotebookDeps } from '../../notebook/controller.js';
import type { Preset } from '../../presets/preset.js';
import { runHeadless } from '../../session/headless.js';
import type { Session } from '../../session/session.js';
import { localMirrorDir, openRemoteSession, remoteHome } from '../open-session.js';
import { connectFromArgs, type HostArgs } from '../remote.js';

export async function remoteNotebookDeps(
  a: HostArgs,
  o: {
    demo: boolean;
    steps?: number;
    stepMs?: number;
    command?: string[];
    cwd?: string;
    presets: Map<string, Preset>;
  },
): Promise<NotebookDeps> {
  let current: Session | null = null;
  const target = await connectFromArgs(a, () => current);
  const home = await remoteHome(target);
  return {
    presets: () => o.presets,
    target: target.label,
    steps: o.steps,
    openSession: (s) => {
      // the notebook's evidence folder is local: remote runs go to the box's runs dir
      current = openRemoteSession(target, home, {
        lane: s.lane,
        presets: s.presets,
        steps: s.steps,
        demo: o.demo,
        stepMs: o.stepMs,
        command: o.command?.length ? o.command : undefined,
        cwd: o.cwd,
      });
      return current as unknown as CellSession;
    },
    runToVerdict: async (session) =>
      (
        await runHeadless(session as unknown as Session, {
          localDir: (_d, id) => localMirrorDir(target.label, id),
          keepOpen: true,
        })
      ).result,
  };
}
