import { join } from 'node:path';
import type { CommandModule } from 'yargs';
import { type CellSession, NotebookController, type NotebookDeps } from '../../notebook/controller.js';
import { recoverCells } from '../../notebook/recover.js';
import { DEFAULT_NOTEBOOK, NotebookStore } from '../../notebook/store.js';
import { loadPresets } from '../../presets/load.js';
import type { Preset } from '../../presets/preset.js';
import { buildRunSpec, defaultRunsRoot } from '../../runs/build-spec.js';
import { runHeadless } from '../../session/headless.js';
import type { CliDeps } from '../deps.js';
import { lanesReporter } from '../load-lanes.js';
import { openLocalSession } from '../open-session.js';
import { requirePython } from '../preflight.js';
import { reportFailure } from '../report-failure.js';

interface NotebookArgs {
  notebook?: string;
  demo?: boolean;
  steps?: number;
  'step-ms'?: number;
  cwd?: string;
  '--'?: string[];
}

/** the demo keeps its own notebook, so trying it never touches a project's */
export function demoNotebook(env = process.env): string {
  return join(defaultRunsRoot(env), '..', 'demo-notebook.json');
}

const RUN_DIR = '/nsa-dbg-run-dir';

/** Cells run on this machine, to a verdict exactly as `run --headless` gets it. */
export function localNotebookDeps(o: {
  demo: boolean;
  steps?: number;
  stepMs?: number;
  command?: string[];
  cwd?: string;
  presets?: () => Map<string, Preset>;
}): NotebookDeps {
  return {
    presets: o.presets ?? (() => loadPresets()),
    target: 'local',
    steps: o.steps,
    openSession: (s) =>
      openLocalSession({
        lane: s.lane,
        presets: s.presets,
        steps: s.steps,
        demo: o.demo,
        stepMs: o.stepMs,
        command: o.command?.length ? o.command : undefined,
        runsRoot: s.runsRoot,
        cwd: o.cwd,
        attachRunDir: s.attachRunDir,
      }) as unknown as CellSession,
    runToVerdict: async (session) =>
      (await runHeadless(session as never, { localDir: (d) => d, keepOpen: true })).result,
    // as openLocalSession will build it; the run dir is not chosen until the cell starts
    commandFor: (preset, steps) => {
      const spec = buildRunSpec({
        preset,
        steps,
        command: o.command?.length ? o.command : undefined,
        demo: o.demo ? { stepMs: o.stepMs } : undefined,
        cwd: o.cwd,
        runsRoot: RUN_DIR,
      });
      const argv = spec.argv.map((a) => a.replace(spec.runDir, '<run dir>'));
      return { argv, cwd: spec.cwd };
    },
  };
}

/** `nsa-dbg` with no subcommand: the notebook of this folder (or --notebook FILE) in the TUI */
export function notebookCommand(deps: CliDeps): CommandModule<object, NotebookArgs> {
  return {
    command: '$0',
    describe: `open the notebook (./${DEFAULT_NOTEBOOK} unless --notebook FILE): cells of runs, A/B toggles, compare, report`,
    builder: (y) =>
      y
        .parserConfiguration({ 'populate--': true })
        .option('notebook', { type: 'string', describe: `notebook file (default ./${DEFAULT_NOTEBOOK})` })
        .option('demo', {
          type: 'boolean',
          describe: 'new cells run the bundled demo trainer (own notebook)',
        })
        .option('steps', { type: 'number', describe: 'steps for new cells (default: the lane’s)' })
        .option('step-ms', { type: 'number', describe: 'with --demo: milliseconds per step' })
        .option('cwd', { type: 'string', describe: 'working directory for the trainer command' }) as never,
    handler: async (a) => {
      if (a.demo) await requirePython();
      const command = (a['--'] ?? []).map(String);
      const file = a.notebook ?? (a.demo ? demoNotebook() : DEFAULT_NOTEBOOK);
      let store: NotebookStore;
      try {
        store = NotebookStore.open(file);
      } catch (e) {
        return reportFailure(e);
      }
      // a broken lane file is said in the status line once (the terminal is the notebook's), and the
      // other lanes work; the files are read again whenever lanes are listed, so edits show up
      let told: string[] = [];
      let controller: NotebookController | null = null;
      const presets = lanesReporter((lines) => {
        const text =
          lines.length === 1 ? lines[0]! : `${lines.length} lane files skipped: ${lines.join(' · ')}`;
        // never during a render of the view that asked for the lanes
        if (controller) setImmediate(() => controller?.setNotice(text));
        else told = [text];
      });
      presets();
      controller = new NotebookController(
        store,
        localNotebookDeps({
          demo: !!a.demo,
          steps: a.steps,
          stepMs: a['step-ms'],
          command,
          cwd: a.cwd,
          presets,
        }),
      );
      // cells a previous nsa-dbg left running and whose run has ended since get their verdict now
      const recovered = await recoverCells(store).catch(() => []);
      if (recovered.length)
        controller.setNotice(
          `verdicts for ${recovered.join(', ')}: their runs ended while the notebook was closed`,
        );
      for (const text of told) controller.setNotice(text);
      const tui = await deps.loadTui();
      if (!tui.runNotebookTui) throw new Error('this build has no notebook view');
      await tui.runNotebookTui(controller);
    },
  };
}
