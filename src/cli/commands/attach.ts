import type { CommandModule } from 'yargs';
import { defaultRunsRoot } from '../../runs/build-spec.js';
import { listRuns, pickRun } from '../../runs/list-runs.js';
import { runHeadless } from '../../session/headless.js';
import type { Session } from '../../session/session.js';
import { LocalTarget } from '../../targets/local.js';
import type { Target } from '../../targets/target.js';
import type { CliDeps } from '../deps.js';
import {
  defaultRemoteRunsRoot,
  localMirrorDir,
  openLocalSession,
  openRemoteSession,
  remoteHome,
} from '../open-session.js';
import { connectFromArgs, type HostArgs, withHostOptions } from '../remote.js';
import { reportFailure } from '../report-failure.js';

interface AttachArgs extends HostArgs {
  run?: string;
  'runs-dir'?: string;
  headless?: boolean;
  json?: boolean;
}

export function attachCommand(deps: CliDeps): CommandModule<object, AttachArgs> {
  return {
    command: 'attach [run]',
    describe: 'list the runs on a box, or re-attach to one (live or finished)',
    builder: (y) =>
      withHostOptions(
        y
          .positional('run', { type: 'string', describe: 'run id (or an unambiguous part of it)' })
          .option('runs-dir', { type: 'string', describe: 'runs root on the box (default ~/.nsa-dbg/runs)' })
          .option('headless', { type: 'boolean', describe: 'no dashboard: follow to the end and report' })
          .option('json', { type: 'boolean', describe: 'with --headless or when listing: JSON output' }),
      ) as never,
    handler: async (a) => {
      try {
        let session: Session | null = null;
        let target: Target;
        let runsRoot: string;
        let home = '';
        if (a.host) {
          target = await connectFromArgs(a, () => session);
          home = await remoteHome(target);
          runsRoot = a['runs-dir'] ?? defaultRemoteRunsRoot(home);
        } else {
          target = new LocalTarget();
          runsRoot = a['runs-dir'] ?? defaultRunsRoot();
        }
        const runs = await listRuns(target, runsRoot);
        if (!a.run) {
          if (a.json) process.stdout.write(`${JSON.stringify(runs)}\n`);
          else if (!runs.length) process.stdout.write(`no runs in ${target.label}:${runsRoot}\n`);
          else
            for (const r of runs)
              process.stdout.write(
                `${r.runId}  ${r.status}${r.exitCode !== undefined ? ` ${r.exitCode}` : ''}${r.job ? `  job ${r.job.id} ${r.job.state}${r.job.reason && r.job.state === 'PENDING' ? ` (${r.job.reason})` : ''}` : ''}  lane ${r.lane}  ${r.command}\n`,
              );
          await target.close();
          return;
        }
        const picked = pickRun(runs, a.run);
        const o = { lane: picked.lane, demo: false, attachRunDir: picked.runDir, runsRoot };
        session = a.host ? openRemoteSession(target, home, o) : openLocalSession(o);
        if (a.headless) {
          const out = await runHeadless(session, {
            localDir: (d, id) => (a.host ? localMirrorDir(target.label, id) : d),
          });
          process.stdout.write(
            a.json
              ? `${JSON.stringify(out.result)}\n`
              : `${out.result.go ? 'GO' : 'NO-GO'} ${out.result.verdict}\n`,
          );
          process.exit(out.exitCode);
        }
        const tui = await deps.loadTui();
        await session.start();
        await tui.runTui(session);
      } catch (e) {
        if (
          /no run matches|matches \d+ runs|re-attaching to it is not supported/.test((e as Error).message)
        ) {
          process.stderr.write(`nsa-dbg: ${(e as Error).message}\n`);
          // exit now: the open SSH connection would keep the process alive
          process.exit(2);
        }
        reportFailure(e);
      }
    },
  };
}
