import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { packageVersion } from '../util/package-root.js';
import { analyzeCommand } from './commands/analyze.js';
import { attachCommand } from './commands/attach.js';
import { demoCommand } from './commands/demo.js';
import { lanesCommand } from './commands/lanes.js';
import { reportCommand } from './commands/report.js';
import { runCommand } from './commands/run.js';
import type { CliDeps } from './deps.js';

export async function main(argv: string[], deps: CliDeps): Promise<void> {
  await yargs(hideBin(argv))
    .scriptName('nsa-dbg')
    .usage(
      '$0 <command> [options]\n\nA terminal debugger for NSA training runs on local and remote GPU boxes.',
    )
    .command(demoCommand(deps))
    .command(runCommand(deps))
    .command(attachCommand(deps))
    .command(lanesCommand)
    .command(analyzeCommand)
    .command(reportCommand)
    .demandCommand(1, 'Name a command: demo, run, attach, analyze, report or lanes (see --help).')
    .strict()
    .help()
    .alias('h', 'help')
    .version(packageVersion())
    .wrap(Math.min(110, process.stdout.columns || 80))
    .fail((msg, err, y) => {
      if (err) throw err;
      process.stderr.write(`${y.help()}\n\nnsa-dbg: ${msg}\n`);
      process.exit(2);
    })
    .parseAsync();
}
