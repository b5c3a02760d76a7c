/**
 * The notebook as the TUI drives it: start a cell from a lane (or from another cell with edited
 * env), run it to a verdict exactly as `run --headless` does, keep the cell up to date, open any
 * cell's dashboard, delete, compare, report. One run at a time. Sessions come from the CLI
 * (injected), so this file knows nothing of targets or terminals.
 */
import { dirname } from 'node:path';
import { bisectCells } from '../bisect/cells.js';
import type { CellBisect } from '../bisect/model.js';
import { getPreset } from '../presets/load.js';
import { type Preset, PresetError } from '../presets/preset.js';
import { writeReport } from '../report/write.js';
import type { RunSpec } from '../runs/launcher.js';
import type { SessionController } from '../session/state.js';
import { FileError } from '../util/fs-errors.js';
import { shJoin } from '../util/sh-quote.js';
import { finishedPatch, isStale, type Outcome, resolveEvidenceDir, startedCell } from './cell-build.js';
import { asCellView } from './cell-view.js';
import { flipFlag } from './flags.js';
import { gitInfo } from './git-info.js';
import type { Cell, CellLink, Notebook } from './model.js';
import { type NotebookAction, nextCellId } from './reducer.js';
import { MASK } from './secrets.js';
import type { NotebookStore } from './store.js';

export interface CellSession extends SessionController {
  start(): Promise<void>;
  currentRun(): { spec: RunSpec; exited: boolean } | null;
}

export interface OpenCellOptions {
  lane: string;
  presets: Map<string, Preset>;
  runsRoot: string;
  steps?: number;
  /** re-attach to a finished (or running) cell's run dir instead of starting the lane */
  attachRunDir?: string;
}

export interface NotebookDeps {
  presets: () => Map<string, Preset>;
  openSession(o: OpenCellOptions): CellSession;
  /** start the session and run it to a verdict, taking evidence and stopping on a stall */
  runToVerdict(session: CellSession): Promise<Outcome & { localDir: string }>;
  target: string;
  /** steps for new cells (a phase's own steps win) */
  steps?: number;
  now?: () => Date;
  /** the command a new cell of `preset` would run and where (shown before it starts) */
  commandFor?(preset: Preset, steps?: number): { argv: string[]; cwd: string };
}

export interface NotebookViewState {
  file: string;
  notebook: Notebook;
  /** cells whose lane file changed since they ran */
  stale: string[];
  /** the cell whose run is in progress */
  running: string | null;
  notice: string | null;
}

export interface StartRequest {
  lane: string;
  /** the full env to run with (default: the lane's) */
  env?: Record<string, string>;
  /** a bisection's trial: the lane's args, demo env and detector settings replaced */
  preset?: Partial<Pick<Preset, 'args' | 'demoEnv' | 'detector'>>;
  bisect?: CellBisect;
  parent?: string;
  link?: CellLink;
  phase?: number;
}

type Phased = Preset & { phases?: Array<{ steps: number }> };

export class NotebookController {
  /** a bisection (src/bisect) holds the run slot between its trials; close() stops it */
  private task: { abort: AbortController; done: Promise<unknown> } | null = null;
  /** the run in progress: `id` is the cell it becomes; `added` once the cell is in the notebook */
  private active: { session: CellSession; id: string; added: boolean; done: Promise<void> } | null = null;
  private notice: string | null = null;
  private readonly listeners = new Set<(s: NotebookViewState) => void>();
  private state: NotebookViewState;

  constructor(
    private readonly store: NotebookStore,
    private readonly deps: NotebookDeps,
  ) {
    this.state = this.build();
    store.subscribe(() => this.publish());
  }

  private build(): NotebookViewState {
    const nb = this.store.get();
    return {
      file: this.store.file,
      notebook: nb,
      stale: nb.cells.filter((c) => c.state !== 'running' && isStale(c)).map((c) => c.id),
      running: this.active?.id ?? null,
      notice: this.notice,
    };
  }

  private publish(): void {
    this.state = this.build();
    for (const l of this.listeners) l(this.state);
  }

  private say(text: string): void {
    this.notice = text;
    this.publish();
  }

  getState(): NotebookViewState {
    return this.state;
  }

  subscribe(cb: (s: NotebookViewState) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  presets(): Preset[] {
    return [...this.deps.presets().values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * What a new cell of this lane will run, and in which folder, as a shell would show it: a plain
   * `nsa-dbg` runs the lane's own command, else nsa-vibe's trainer, from the current folder.
   */
  commandFor(preset: Preset): { command: string; cwd: string } | null {
    const steps = (preset as Phased).phases?.[0]?.steps ?? this.deps.steps;
    const c = this.deps.commandFor?.(preset, steps);
    return c ? { command: shJoin(c.argv), cwd: c.cwd } : null;
  }

  private cell(id: string): Cell | undefined {
    return this.store.get().cells.find((c) => c.id === id);
  }

  /** start a run as a new cell; refused (with a notice) while another cell runs */
  start(req: StartRequest): string | null {
    if (this.active) {
      this.say(`${this.active.id} is still running: one run at a time`);
      return null;
    }
    if (this.task && !req.bisect) {
      this.say('a bisection is running: one run at a time (q stops it)');
      return null;
    }
    const presets = this.deps.presets();
    let base: Phased;
    try {
      base = getPreset(presets, req.lane);
    } catch (e) {
      // a lane whose file is broken says where (its path, field and position)
      this.say(e instanceof PresetError ? e.message : `unknown lane "${req.lane}"`);
      return null;
    }
    // a lane with phases starts at its first; a linked cell keeps its parent's phase
    const phase = req.phase ?? (base.phases?.length ? 0 : undefined);
    const phaseSteps = phase !== undefined ? base.phases?.[phase]?.steps : undefined;
    const preset: Phased = {
      ...base,
      env: req.env ?? base.env,
      ...req.preset,
      ...(phaseSteps !== undefined
        ? { steps: phaseSteps, acceptance: { ...base.acceptance, steps: phaseSteps } }
        : {}),
    };
    const runPresets = new Map(presets).set(req.lane, preset);
    const session = this.deps.openSession({
      lane: req.lane,
      presets: runPresets,
      runsRoot: this.store.evidenceDir,
      steps: phaseSteps ?? this.deps.steps,
    });
    const id = nextCellId(this.store.get());
    const slot = { session, id, added: false, unsaved: null as string | null, done: Promise.resolve() };
    this.active = slot;
    const addCell = (spec: RunSpec, localDir: string) => {
      if (slot.added || slot.unsaved) return;
      const saved = this.save({
        type: 'addCell',
        cell: {
          ...(req.bisect ? { bisect: req.bisect } : {}),
          ...startedCell({
            spec,
            preset,
            target: this.deps.target,
            localDir,
            notebookDir: dirname(this.store.file),
            git: this.deps.target === 'local' ? gitInfo(spec.cwd) : undefined,
            started: spec.createdAt,
            parent: req.parent,
            link: req.link,
            phase,
          }),
        },
      });
      // a notebook that cannot be written (its folder turned read-only): the run goes on unrecorded
      slot.unsaved = saved ? null : this.notice;
      slot.added = saved;
      this.publish();
    };
    // the cell appears as soon as the run exists, so the list shows it running
    const unsubscribe = session.subscribe(() => {
      const run = session.currentRun();
      if (run) addCell(run.spec, run.spec.runDir);
    });
    slot.done = this.deps.runToVerdict(session).then(
      (out) => {
        unsubscribe();
        const run = session.currentRun();
        if (run) addCell(run.spec, out.localDir);
        this.active = null;
        const outcome = `${out.go ? 'GO' : 'NO-GO'} (${out.verdict})`;
        if (slot.unsaved)
          return this.say(`${id} ${req.lane}: ${outcome}, not in the notebook: ${slot.unsaved}`);
        if (!slot.added) return this.say(`lane ${req.lane}: the run did not start`);
        const ended = (this.deps.now?.() ?? new Date()).toISOString();
        const saved = this.save({
          type: 'updateCell',
          id,
          patch: finishedPatch(out, out.localDir, run?.spec.env ?? {}, ended),
        });
        if (!saved) return;
        this.say(`${id} ${req.lane}: ${outcome}`);
        this.nextPhase(id, { ...req, phase }, base, out.go);
      },
      (e: unknown) => {
        unsubscribe();
        this.active = null;
        if (slot.added && !this.save({ type: 'updateCell', id, patch: { state: 'failed' } })) return;
        this.say(`lane ${req.lane} failed: ${e instanceof Error ? e.message : String(e)}`);
      },
    );
    this.say(`${id} ${req.lane}: starting`);
    return id;
  }

  /**
   * Write an action to the notebook. A file that cannot be written (its folder turned read-only, a
   * full disk) is said in the status line, naming the file and the cause; the notebook on disk and
   * in memory stay as they were and the view goes on.
   */
  private save(action: NotebookAction): boolean {
    try {
      this.store.dispatch(action);
      return true;
    } catch (e) {
      if (!(e instanceof FileError)) throw e;
      this.say(e.message);
      return false;
    }
  }

  /** smoke ladder: phase N+1 starts as its own linked cell only when phase N passed */
  private nextPhase(cellId: string, req: StartRequest, base: Phased, go: boolean): void {
    const phase = req.phase ?? 0;
    if (!base.phases || phase + 1 >= base.phases.length) return;
    if (!go) {
      this.say(`${cellId} ${base.name}: phase ${phase + 1} failed; the ladder stops here`);
      return;
    }
    this.start({ lane: base.name, env: req.env, parent: cellId, link: 'phase', phase: phase + 1 });
  }

  /** resolves when the running cell (if any) has its verdict written */
  idle(): Promise<void> {
    return this.active?.done ?? Promise.resolve();
  }

  /** the env a new cell made from `cell` starts with: the lane's now, the cell's edits on top */
  private envFrom(cell: Cell): Record<string, string> {
    const lane = this.deps.presets().get(cell.lane.name);
    const env = { ...(lane?.env ?? {}) };
    for (const [k, v] of Object.entries(cell.env)) if (v !== MASK) env[k] = v;
    return env;
  }

  rerun(id: string): string | null {
    const c = this.cell(id);
    if (!c) return null;
    return this.start({
      lane: c.lane.name,
      env: this.envFrom(c),
      parent: c.id,
      link: 'rerun',
      phase: c.phase,
    });
  }

  /** a new cell from `id` with `edits` applied (value null: unset) */
  runEdited(id: string, edits: Record<string, string | null>): string | null {
    const c = this.cell(id);
    if (!c) return null;
    const env = this.envFrom(c);
    for (const [k, v] of Object.entries(edits)) {
      if (v === null) delete env[k];
      else env[k] = v;
    }
    return this.start({ lane: c.lane.name, env, parent: c.id, link: 'toggle', phase: c.phase });
  }

  /** the one-key A/B: flip `flag` 0↔1 in a new cell made from `id` */
  toggle(id: string, flag: string): string | null {
    const c = this.cell(id);
    return c ? this.runEdited(id, { [flag]: flipFlag(c.env[flag]) }) : null;
  }

  delete(id: string): void {
    if (this.active?.id === id) {
      this.say(`${id} is running: it cannot be deleted now`);
      return;
    }
    if (this.save({ type: 'deleteCell', id })) this.say(`${id} deleted (its evidence folder stays on disk)`);
  }

  /**
   * A dashboard for a cell: the live session for the running one, else a re-attach to its run
   * dir. Leaving the dashboard never stops the run; the lane cannot be switched from inside a cell.
   */
  async openCell(id: string): Promise<SessionController | null> {
    const c = this.cell(id);
    if (!c) return null;
    if (this.active?.id === id) return asCellView(this.active.session, null);
    const session = this.deps.openSession({
      lane: c.lane.name,
      presets: this.deps.presets(),
      runsRoot: this.store.evidenceDir,
      attachRunDir: resolveEvidenceDir(dirname(this.store.file), c),
    });
    await session.start();
    return asCellView(session, session);
  }

  /** the report (Markdown + SVG) beside the notebook; returns the Markdown file */
  report(): string {
    return writeReport({ notebookFile: this.store.file }).files[0] ?? '';
  }

  setNotice(text: string): void {
    this.say(text);
  }

  /**
   * Run a long task that starts cells one after another (a bisection): at most one at a time, and
   * close() aborts it before stopping its running cell.
   */
  runTask(name: string, fn: (signal: AbortSignal) => Promise<unknown>): boolean {
    if (this.task || this.active) {
      this.say(`${this.active?.id ?? 'a bisection'} is running: ${name} when it has ended`);
      return false;
    }
    const abort = new AbortController();
    const slot = { abort, done: Promise.resolve() as Promise<unknown> };
    this.task = slot;
    slot.done = fn(abort.signal)
      .catch((e: unknown) => this.say(`${name} failed: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => {
        if (this.task === slot) this.task = null;
        this.publish();
      });
    return true;
  }

  /** `:bisect` on two marked cells: the search runs as this controller's task */
  bisect(a: string, b: string): void {
    const d = this.deps;
    bisectCells(this, this.store, { presets: d.presets(), target: d.target, steps: d.steps }, a, b);
  }

  /** stop a running cell (its verdict is still written), then release the notebook */
  async close(): Promise<void> {
    this.task?.abort.abort();
    const a = this.active;
    if (a) {
      await a.session.quit().catch(() => undefined);
      await a.done;
    }
    await this.task?.done;
    this.store.close();
  }
}
