import type { CommandModule } from 'yargs';
import { listRuns, pickRun } from '../../launch/list-runs.js';
import { defaultRunsRoot } from '../../runs/build-spec.js';
import { readRunSpec } from '../../runs/spec-file.js';
import { LocalTarget } from '../../targets/local.js';
import type { Target } from '../../targets/target.js';
import type { CliDeps } from '../deps.js';
import { openerForRun } from '../open-from-args.js';
import { defaultRemoteRunsRoot, linkSink, remoteHome } from '../open-session.js';
import { connectFromArgs, type HostArgs, withHostOptions } from '../remote.js';
import { reportFailure } from '../report-failure.js';
import { showDashboard, showHeadless } from '../show.js';

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
        const sink = linkSink();
        const target: Target = a.host ? await connectFromArgs(a, sink.report) : new LocalTarget();
        const home = a.host ? await remoteHome(target) : null;
        const runsRoot = a['runs-dir'] ?? (home === null ? defaultRunsRoot() : defaultRemoteRunsRoot(home));
        const runs = await listRuns(target, runsRoot);
        if (!a.run) {
          if (a.json) process.stdout.write(`${JSON.stringify(runs)}\n`);
          else if (!runs.length) process.stdout.write(`no runs in ${target.label}:${runsRoot}\n`);
          else
            for (const r of runs)
              process.stdout.write(
                `${r.runId}  ${r.status}${r.exitCode !== undefined ? ` ${r.exitCode}` : ''}${r.note ? `  ${r.note}` : ''}  lane ${r.lane}  ${r.command}\n`,
              );
          await target.close();
          return;
        }
        const picked = pickRun(runs, a.run);
        const spec = await readRunSpec(target, picked.runDir);
        if (!spec) throw new Error(`no run matches "${a.run}"`);
        // the run's own place: a `--hosts` cell reconnects to each of its hosts
        const opener = await openerForRun(a, target, home, spec, sink);
        const session = opener.open({
          lane: picked.lane,
          demo: false,
          attachRunDir: picked.runDir,
          runsRoot,
        });
        if (a.headless) await showHeadless(session, a.json, (r) => `${r.go ? 'GO' : 'NO-GO'} ${r.verdict}`);
        await showDashboard(deps, session);
      } catch (e) {
        if (/no run matches|matches \d+ runs/.test((e as Error).message)) {
          process.stderr.write(`nsa-dbg: ${(e as Error).message}\n`);
          // exit now: the open SSH connection would keep the process alive
          process.exit(2);
        }
        reportFailure(e);
        // a connection failure to a host of a `--hosts` cell, with others open
        if (process.exitCode) process.exit(process.exitCode);
      }
    },
  };
}
