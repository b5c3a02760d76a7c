import { join } from 'node:path';
import type { CommandModule } from 'yargs';
import type { Lane } from '../../lanes/lane.js';
import { NotebookController } from '../../notebook/controller.js';
import { recoverCells } from '../../notebook/recover.js';
import { DEFAULT_NOTEBOOK, NotebookStore } from '../../notebook/store.js';
import { defaultRunsRoot } from '../../runs/build-spec.js';
import { checkBoxes } from '../check-boxes.js';
import type { CliDeps } from '../deps.js';
import { lanesReporter } from '../load-lanes.js';
import { notebookDeps } from '../notebook-deps.js';
import { openerFromArgs } from '../open-from-args.js';
import { requirePython } from '../preflight.js';
import { reportFailure, usageError } from '../report-failure.js';
import { showNotebook } from '../show.js';
import { type TargetArgs, targetUsageError, withTargetOptions } from '../target-options.js';

interface NotebookArgs extends TargetArgs {
  notebook?: string;
  demo?: boolean;
  steps?: number;
  'step-ms'?: number;
  '--'?: string[];
}

/** `--notebook FILE`, else this folder's; the demo keeps its own, so trying it never touches a project's */
export function notebookFileOf(a: { notebook?: string; demo?: boolean }): string {
  return a.notebook ?? (a.demo ? join(defaultRunsRoot(), '..', 'demo-notebook.json') : DEFAULT_NOTEBOOK);
}

/** `nsa-dbg` with no subcommand: the notebook of this folder (or --notebook FILE) in the TUI */
export function notebookCommand(deps: CliDeps): CommandModule<object, NotebookArgs> {
  return {
    command: '$0',
    describe: `open the notebook (./${DEFAULT_NOTEBOOK} unless --notebook FILE): cells of runs, A/B toggles, compare, report`,
    builder: (y) =>
      withTargetOptions(
        y
          .parserConfiguration({ 'populate--': true })
          .option('notebook', { type: 'string', describe: `notebook file (default ./${DEFAULT_NOTEBOOK})` })
          .option('demo', {
            type: 'boolean',
            describe: 'new cells run the bundled demo trainer (own notebook)',
          })
          .option('steps', { type: 'number', describe: 'steps for new cells (default: the lane’s)' })
          .option('step-ms', { type: 'number', describe: 'with --demo: milliseconds per step' })
          .option('cwd', { type: 'string', describe: 'working directory for the trainer command' })
          .option('runs-dir', {
            type: 'string',
            describe:
              'with --host or --hosts: where run dirs go there (each cell’s folder here is beside the notebook)',
          }),
      ) as never,
    handler: async (a) => {
      const usage = targetUsageError(a);
      if (usage) return usageError(usage);
      if (a.demo && !a.host) await requirePython();
      await showNotebook(deps, async () => {
        const command = (a['--'] ?? []).map(String);
        let store: NotebookStore | null = null;
        // a broken lane file is said in the status line once (the terminal is the notebook's), and the
        // other lanes work; the files are read again whenever lanes are listed, so edits show up
        let told: string[] = [];
        let controller: NotebookController | null = null;
        const lanes = lanesReporter((lines) => {
          const text =
            lines.length === 1 ? lines[0]! : `${lines.length} lane files skipped: ${lines.join(' · ')}`;
          // never during a render of the view that asked for the lanes
          if (controller) setImmediate(() => controller?.setNotice(text));
          else told = [text];
        });
        try {
          // taken before connecting: a notebook held by another nsa-dbg fails fast
          store = NotebookStore.open(notebookFileOf(a));
          const opener = await openerFromArgs(a);
          lanes();
          const o = {
            demo: !!a.demo,
            steps: a.steps,
            stepMs: a['step-ms'],
            command,
            cwd: a.cwd,
            lanes,
            // the box check of the place the cells run on, over the notebook's own connection to
            // its box (`--hosts`: one to each host, as `nsa-dbg check` makes)
            checkBox: (lane: Lane) => checkBoxes(a, lane, opener.box),
          };
          controller = new NotebookController(store, notebookDeps(opener, o));
        } catch (e) {
          store?.close();
          reportFailure(e);
          // an SSH connection made before the failure must not keep the process alive
          process.exit(process.exitCode ?? 1);
        }
        // cells a previous nsa-dbg left running and whose run has ended since get their verdict now
        const recovered = await recoverCells(store).catch(() => []);
        if (recovered.length)
          controller.setNotice(
            `verdicts for ${recovered.join(', ')}: their runs ended while the notebook was closed`,
          );
        if (store.openNote) controller.setNotice(store.openNote);
        for (const text of told) controller.setNotice(text);
        return controller;
      });
    },
  };
}
