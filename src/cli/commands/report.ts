import type { CommandModule } from 'yargs';
import { DEFAULT_NOTEBOOK } from '../../notebook/store.js';
import { writeReport } from '../../report/write.js';
import { reportFailure, usageError } from '../report-failure.js';

interface ReportArgs {
  notebook?: string;
  o?: string;
  format?: string;
  cells?: string[];
  rev?: number;
}

export const reportCommand: CommandModule<object, ReportArgs> = {
  command: 'report [notebook]',
  describe: 'write the Test Engineer Report (Markdown + SVG chart, or JSON) from a notebook',
  builder: (y) =>
    y
      .positional('notebook', { type: 'string', describe: `notebook file (default ./${DEFAULT_NOTEBOOK})` })
      .option('o', { type: 'string', describe: 'output file, - for stdout (default <notebook>.report.md)' })
      .option('format', { choices: ['md', 'json'], default: 'md', describe: 'Markdown or JSON' })
      .option('cells', {
        type: 'array',
        string: true,
        describe: 'only these cells (ids like c2, or lane names)',
      })
      .option('rev', { type: 'number', describe: 'the report version in the title (v<N>), default 1' })
      .example('$0 report ab.json -o "2025-08-26 Test Engineer Report - Step 5 v1.md"', '') as never,
  handler: (a) => {
    try {
      const cells = (a.cells ?? []).flatMap((c) => String(c).split(',')).filter(Boolean);
      const r = writeReport({
        notebookFile: a.notebook ?? DEFAULT_NOTEBOOK,
        out: a.o,
        format: a.format === 'json' ? 'json' : 'md',
        cells,
        version: a.rev,
      });
      if (a.o === '-') process.stdout.write(r.text);
      for (const f of r.files) process.stderr.write(`nsa-dbg: wrote ${f}\n`);
    } catch (e) {
      if (e instanceof Error && /^no cell matches/.test(e.message)) return usageError(e.message);
      reportFailure(e);
    }
  },
};
