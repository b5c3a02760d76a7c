import type { CommandModule } from 'yargs';
import { PresetError } from '../../presets/preset.js';
import { runHeadless } from '../../session/headless.js';
import type { CliDeps } from '../deps.js';
import { openLocalSession } from '../open-session.js';
import { requirePython } from '../preflight.js';

interface RunArgs {
  lane: string;
  steps?: number;
  headless?: boolean;
  json?: boolean;
  demo?: boolean;
  'step-ms'?: number;
  'runs-dir'?: string;
  'out-dir'?: string;
  cwd?: string;
  '--'?: string[];
  _: (string | number)[];
}

export function runCommand(deps: CliDeps): CommandModule<object, RunArgs> {
  return {
    command: 'run',
    describe: 'run a trainer command with a lane’s env: nsa-dbg run --lane NAME [--steps N] -- COMMAND...',
    builder: (y) =>
      y
        .parserConfiguration({ 'populate--': true })
        .option('lane', { type: 'string', demandOption: true, describe: 'lane (env preset) name, see `nsa-dbg lanes`' })
        .option('steps', { type: 'number', describe: 'steps to run (appended as --steps N)' })
        .option('headless', { type: 'boolean', describe: 'no dashboard: run to the end (or a confirmed stall) and report' })
        .option('json', { type: 'boolean', describe: 'with --headless: print one JSON object' })
        .option('demo', { type: 'boolean', describe: 'run the bundled demo trainer instead of a command' })
        .option('step-ms', { type: 'number', describe: 'with --demo: milliseconds per step' })
        .option('runs-dir', { type: 'string', describe: 'where run directories go (default ~/.nsa-dbg/runs)' })
        .option('out-dir', { type: 'string', describe: 'the trainer’s out_dir (where heartbeats go), if not the run dir' })
        .option('cwd', { type: 'string', describe: 'working directory for the command (default: here)' })
        .example('$0 run --lane batched-prefill --steps 200 -- python -u scripts/train_showcase.py', '')
        .example('$0 run --headless --json --lane baseline --demo --steps 20', '') as never,
    handler: async (a) => {
      const command = (a['--'] ?? []).map(String);
      if (a.demo) await requirePython();
      let session: ReturnType<typeof openLocalSession>;
      try {
        session = openLocalSession({
          lane: a.lane,
          steps: a.steps,
          demo: !!a.demo,
          stepMs: a['step-ms'],
          command: command.length ? command : undefined,
          runsRoot: a['runs-dir'],
          outDir: a['out-dir'],
          cwd: a.cwd,
        });
      } catch (e) {
        process.stderr.write(`nsa-dbg: ${(e as Error).message}\n`);
        process.exitCode = 2;
        if (!(e instanceof PresetError) && !/unknown lane/.test((e as Error).message)) throw e;
        return;
      }
      if (a.headless) {
        const out = await runHeadless(session, {
          localDir: (d) => d,
          onProgress: (l) => {
            if (!a.json) process.stderr.write(`nsa-dbg: ${l}\n`);
          },
        });
        if (a.json) process.stdout.write(`${JSON.stringify(out.result)}\n`);
        else
          process.stdout.write(
            `${out.result.go ? 'GO' : 'NO-GO'} lane ${out.result.lane}: ${out.result.verdict}, ${out.result.stepsReached} steps${out.result.reasons.length ? ` (${out.result.reasons.join('; ')})` : ''}\n  run dir: ${out.result.runDir}\n`,
          );
        process.exitCode = out.exitCode;
        return;
      }
      const tui = await deps.loadTui();
      await session.start();
      await tui.runTui(session);
    },
  };
}
