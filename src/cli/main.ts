import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { debugLog } from '../util/debug-log.js';
import { packageVersion } from '../util/package-root.js';
import { analyzeCommand } from './commands/analyze.js';
import { attachCommand } from './commands/attach.js';
import { bisectCommand } from './commands/bisect.js';
import { checkCommand } from './commands/check.js';
import { demoCommand } from './commands/demo.js';
import { lanesCommand } from './commands/lanes.js';
import { notebookCommand } from './commands/notebook.js';
import { reportCommand } from './commands/report.js';
import { runCommand } from './commands/run.js';
import type { CliDeps, TuiOptions } from './deps.js';
import { numericOptionError } from './numeric-options.js';

/**
 * The dashboard's drawing options are global (every command that opens it takes them), so they are
 * read once here and handed to runTui by the injected UI rather than by each command.
 */
function withTuiOptions(deps: CliDeps, options: TuiOptions): CliDeps {
  return {
    ...deps,
    loadTui: async () => {
      const tui = await deps.loadTui();
      return { runTui: (view) => tui.runTui(view, options) };
    },
  };
}

/**
 * `nsa-dbg attach | head -1`: the reader is gone once it has what it wants, and the next write
 * fails with EPIPE as an 'error' event nobody handles (a stack, exit 1). Like any Unix filter,
 * stop quietly then: exit 0, nothing more printed.
 */
function quietOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(0);
      throw e;
    });
}

export async function main(argv: string[], rawDeps: CliDeps): Promise<void> {
  quietOnClosedPipe();
  debugLog(`nsa-dbg ${hideBin(argv).join(' ')} (node ${process.version} ${process.execArgv.join(' ')})`);
  const tuiOptions: TuiOptions = {};
  const deps = withTuiOptions(rawDeps, tuiOptions);
  await yargs(hideBin(argv))
    .scriptName('nsa-dbg')
    .usage(
      '$0 [command] [options]\n\nA terminal debugger for NSA training runs on local and remote GPU boxes.',
    )
    .option('ascii', {
      type: 'boolean',
      global: true,
      describe:
        'draw with ASCII only, no braille or box characters (default when the locale is not UTF-8; --no-ascii: never)',
    })
    .middleware((a) => {
      tuiOptions.ascii = a.ascii as boolean | undefined;
    })
    .command(demoCommand(deps))
    .command(runCommand(deps))
    .command(attachCommand(deps))
    .command(bisectCommand)
    .command(checkCommand)
    .command(lanesCommand)
    .command(analyzeCommand)
    .command(reportCommand)
    // no subcommand: the notebook of this folder
    .command(notebookCommand(deps))
    // every command's numbers, before its handler runs: a string is yargs' failure message
    .check((a) => numericOptionError(a, hideBin(argv)) ?? true, true)
    .strict()
    .help()
    .alias('h', 'help')
    .version(packageVersion())
    .wrap(Math.min(110, process.stdout.columns || 80))
    // a usage error (yargs' own, a YError) is one plain line, the help one --help away: exit 2.
    // Anything else thrown by a handler is not usage and goes on to the caller.
    .fail((msg, err) => {
      if (err instanceof Error && err.name !== 'YError') throw err;
      process.stderr.write(`nsa-dbg: ${msg.replace(/\s*\n\s*/g, ' ')} (see --help)\n`);
      process.exit(2);
    })
    .parseAsync();
}
