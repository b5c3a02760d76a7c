/**
 * A notebook's cells on the place the command line named (this machine, `--host`, `--slurm`,
 * `--hosts`): each cell a session from the same Opener, run to a verdict exactly as
 * `run --headless` gets it, its folder in the notebook's evidence folder. The notebook TUI and
 * `bisect` share this.
 */
import { bisectCells } from '../bisect/cells.js';
import type { Lane } from '../lanes/lane.js';
import { loadLanes } from '../lanes/load.js';
import type { CellSession, NotebookDeps } from '../notebook/controller-types.js';
import type { CheckRun } from '../preflight/format.js';
import { writeReport } from '../report/write.js';
import { buildRunSpec } from '../runs/build-spec.js';
import { runHeadless } from '../session/headless.js';
import type { Session } from '../session/session.js';
import { localOpener, type Opener } from './open-session.js';

export interface CellOptions {
  demo: boolean;
  steps?: number;
  stepMs?: number;
  command?: string[];
  cwd?: string;
  lanes?: () => Map<string, Lane>;
  /** the box check of a lane on the same place (cli/check-boxes.ts), for check cells */
  checkBox?: (lane: Lane) => Promise<CheckRun>;
}

const RUN_DIR = '/nsa-dbg-run-dir';

export function notebookDeps(opener: Opener, o: CellOptions): NotebookDeps & { close(): Promise<void> } {
  // a finished cell is read from its folder here, whatever its target was
  const here = localOpener();
  return {
    lanes: o.lanes ?? (() => loadLanes()),
    target: opener.label,
    ...(opener.launchKey ? { launchKey: opener.launchKey } : {}),
    steps: o.steps,
    demo: o.demo,
    ...(o.checkBox ? { checkBox: o.checkBox } : {}),
    writeReport: (notebookFile) => writeReport({ notebookFile }).files[0] ?? '',
    bisectCells,
    openSession: (s) =>
      opener.open({
        lane: s.lane,
        lanes: s.lanes,
        steps: s.steps,
        demo: o.demo,
        stepMs: o.stepMs,
        command: o.command?.length ? o.command : undefined,
        evidenceRoot: s.evidenceRoot,
        cwd: o.cwd,
        attachRunDir: s.attachRunDir,
      }) as unknown as CellSession,
    openFinished: (s) =>
      here.open({
        lane: s.lane,
        lanes: s.lanes,
        demo: false,
        attachRunDir: s.dir,
        replay: true,
      }) as unknown as CellSession,
    runToVerdict: async (session) =>
      (await runHeadless(session as unknown as Session, { keepOpen: true })).result,
    // what a new cell will run, as its session builds it (the run dir is chosen when it starts)
    commandFor: (lane, steps) => {
      const spec = buildRunSpec({
        lane,
        steps,
        command: o.command?.length ? o.command : undefined,
        demo: o.demo ? { stepMs: o.stepMs } : undefined,
        cwd: o.cwd,
        runsRoot: RUN_DIR,
      });
      return { argv: spec.argv.map((a) => a.replace(spec.runDir, '<run dir>')), cwd: spec.cwd };
    },
    close: () => opener.close(),
  };
}
