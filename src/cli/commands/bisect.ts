import type { CommandModule } from 'yargs';
import { parseDetector } from '../../bisect/detector-arg.js';
import { planFromLanes } from '../../bisect/plan.js';
import { controllerPort } from '../../bisect/port.js';
import { runBisection } from '../../bisect/runner.js';
import { DEFAULT_CONFIDENCE, DEFAULT_MAX_RUNS } from '../../bisect/search.js';
import { bisectionJson, conclusionOf } from '../../bisect/summary.js';
import { notAppliedLines, posteriorLines, textTable } from '../../bisect/table.js';
import { NotebookController } from '../../notebook/controller.js';
import { DEFAULT_NOTEBOOK, NotebookStore } from '../../notebook/store.js';
import { loadLanesForCli } from '../load-lanes.js';
import { notebookDeps } from '../notebook-deps.js';
import { openerFromArgs } from '../open-from-args.js';
import { requirePython } from '../preflight.js';
import { reportFailure, usageError } from '../report-failure.js';
import { type TargetArgs, targetUsageError, withTargetOptions } from '../target-options.js';
import { notebookFileOf } from './notebook.js';

interface BisectArgs extends TargetArgs {
  good: string;
  bad: string;
  steps?: number;
  budget?: number;
  repeat?: number;
  confidence?: number;
  'max-runs'?: number;
  notebook?: string;
  demo?: boolean;
  'step-ms'?: number;
  detector?: string;
  json?: boolean;
  '--'?: string[];
}

export const bisectCommand: CommandModule<object, BisectArgs> = {
  command: 'bisect',
  describe:
    'find the env/args change (or pair) that turns a GO lane into a NO-GO one, flaky failures included',
  builder: (y) =>
    withTargetOptions(
      y
        .parserConfiguration({ 'populate--': true })
        .option('good', { type: 'string', demandOption: true, describe: 'the lane that is GO' })
        .option('bad', { type: 'string', demandOption: true, describe: 'the lane that is NO-GO' })
        .option('steps', { type: 'number', describe: 'steps per trial (default: the good lane’s)' })
        .option('budget', { type: 'number', describe: 'at most this many runs (cached trials are free)' })
        .option('repeat', {
          type: 'number',
          default: 1,
          describe: 'runs per chosen trial; disagreeing ones are flaky (all are evidence)',
        })
        .option('confidence', {
          type: 'number',
          default: DEFAULT_CONFIDENCE,
          describe: 'stop once one candidate has this posterior probability',
        })
        .option('max-runs', {
          type: 'number',
          default: DEFAULT_MAX_RUNS,
          describe:
            'stop after this many runs (status uncertain when below --confidence); the bad side is tried a quarter as often before it counts as not reproduced',
        })
        .option('notebook', {
          type: 'string',
          describe: `trials go into this notebook as cells (default ./${DEFAULT_NOTEBOOK}; --demo: the demo's)`,
        })
        .option('demo', { type: 'boolean', describe: 'run the bundled demo trainer instead of a command' })
        .option('step-ms', { type: 'number', describe: 'with --demo: milliseconds per step' })
        .option('detector', {
          type: 'string',
          describe: 'trials’ detector settings over the lanes’, e.g. floorS=2,spinConfirmS=4,firstStepS=5',
        })
        .option('cwd', { type: 'string', describe: 'working directory for the command' })
        .option('runs-dir', {
          type: 'string',
          describe:
            'with --host or --hosts: where run dirs go there (trials’ folders are beside the notebook)',
        })
        .option('json', { type: 'boolean', describe: 'print one JSON object' })
        .example('$0 bisect --demo --good batched-prefill --bad demo-many-flags --steps 8', '')
        .example(
          '$0 bisect --host gpu1 --good batched-prefill --bad baseline --steps 20 -- python -u scripts/train_showcase.py',
          '',
        ),
    ) as never,
  handler: async (a) => {
    const command = (a['--'] ?? []).map(String);
    for (const k of ['good', 'bad', 'notebook', 'detector'] as const)
      if (Array.isArray(a[k])) return usageError(`give --${k} once`);
    if (a.demo && command.length) return usageError('give either --demo or a command after --, not both');
    const confidence = a.confidence ?? DEFAULT_CONFIDENCE;
    if (!(confidence > 0 && confidence < 1))
      return usageError('--confidence must be a number between 0 and 1');
    const maxRuns = a['max-runs'] ?? DEFAULT_MAX_RUNS;
    if (!Number.isInteger(maxRuns) || maxRuns < 1) return usageError('--max-runs must be a whole number ≥ 1');
    const detector = parseDetector(a.detector);
    if ('error' in detector) return usageError(detector.error);
    const where = targetUsageError(a);
    if (where) return usageError(where);
    let store: NotebookStore | null = null;
    try {
      const lanes = loadLanesForCli([a.good, a.bad]);
      // checked before anything connects: the key needs the place's label, which a connection gives
      const early = planFromLanes(lanes, a.good, a.bad, { target: '', demo: !!a.demo });
      if ('error' in early) return usageError(early.error);
      if (a.demo && !a.host) await requirePython();
      // taken before anything runs: a notebook held by another nsa-dbg fails fast
      store = NotebookStore.open(notebookFileOf(a));
      if (store.openNote) process.stderr.write(`nsa-dbg: ${store.openNote}\n`);
      const opener = await openerFromArgs(a, lanes.get(a.good));
      const planned = planFromLanes(lanes, a.good, a.bad, {
        target: opener.label,
        ...(opener.launchKey ? { launchKey: opener.launchKey } : {}),
        steps: a.steps,
        demo: !!a.demo,
        stepMs: a['step-ms'],
        command: command.length ? command : undefined,
        budget: a.budget,
        repeat: a.repeat,
        confidence,
        maxRuns,
        detector: detector.settings,
      });
      if ('error' in planned) return usageError(planned.error);
      const o = { demo: !!a.demo, steps: a.steps, stepMs: a['step-ms'], command, cwd: a.cwd };
      const deps = notebookDeps(opener, { ...o, lanes: () => lanes });
      const controller = new NotebookController(store, deps);
      // Ctrl-C stops the running trial (its verdict is kept) and releases the notebook
      process.once('SIGINT', () => void controller.close().finally(() => process.exit(130)));
      const port = controllerPort(controller, store, planned.lane, planned.trial);
      const onProgress = a.json ? undefined : (l: string) => process.stderr.write(`nsa-dbg: ${l}\n`);
      const r = await runBisection(port, { ...planned.plan, target: deps.target, onProgress });
      const nb = store.get();
      await controller.close();
      if (a.json) process.stdout.write(`${JSON.stringify(bisectionJson(nb, r))}\n`);
      else
        process.stdout.write(
          [
            `bisect ${r.id}: good ${r.good.lane}, bad ${r.bad.lane}: ${r.changes.length} change${r.changes.length === 1 ? '' : 's'}, class ${r.verdictClass ?? '?'}`,
            ...textTable(nb, r).map((l) => `  ${l}`),
            ...posteriorLines(r).map((l) => `  ${l}`),
            ...notAppliedLines(nb, r).map((l) => `  ${l}`),
            conclusionOf(nb, r),
            `${r.result?.runs ?? 0} runs; ${r.result?.status ?? r.state}; notebook ${store.file}`,
            '',
          ].join('\n'),
        );
      // an SSH connection and timers must not keep the process alive
      process.exit(r.result?.status === 'found' ? 0 : 1);
    } catch (e) {
      store?.close();
      reportFailure(e);
    }
  },
};
