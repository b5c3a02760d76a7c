/**
 * The notebook as the TUI drives it: start a cell from a lane (or from another cell with edited
 * env), run it to a verdict exactly as `run --headless` does, keep the cell up to date, open any
 * cell's dashboard, delete, compare, report. One run at a time: a cell asked for while another
 * runs is queued and starts when the one before it has ended. Sessions come from the CLI
 * (injected), so this file knows nothing of targets or terminals.
 */
import { type Lane, LaneError } from '../lanes/lane.js';
import { getLane } from '../lanes/load.js';
import type { SessionController } from '../session/state.js';
import { FileError } from '../util/fs-errors.js';
import { isStale } from './cell-build.js';
import { CellRun, laneFor } from './cell-run.js';
import { boxSeen } from './check-cell.js';
import { startCheck } from './check-task.js';
import type { NotebookDeps, NotebookViewState, StartRequest } from './controller-types.js';
import type { Cell } from './model.js';
import { openCellView } from './open-cell.js';
import { type NotebookAction, nextCellId } from './reducer.js';
import { describeRequest, editedRequest, laneCommand, rerunRequest } from './requests.js';
import { RunQueue } from './run-queue.js';
import type { NotebookStore } from './store.js';

export class NotebookController {
  /** a bisection (src/bisect) holds the run slot between its trials; close() stops it */
  private task: { abort: AbortController; done: Promise<unknown> } | null = null;
  /** the run in progress (its cell id is given before the cell is written) */
  private active: CellRun | null = null;
  /** the check cell whose box check is in progress (it holds the task slot) */
  private checking: string | null = null;
  /** runs that ended but whose session a dashboard still shows */
  private readonly shown = new Set<CellRun>();
  private readonly queue = new RunQueue<StartRequest>();
  private closing = false;
  private closed: Promise<void> | null = null;
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
      running: this.active?.id ?? this.checking,
      box: { target: this.deps.target, seen: boxSeen(nb.cells, this.deps.target) },
      live: this.active?.live ?? null,
      stopping: this.active?.stopping ?? null,
      queued: this.queue.list().map(({ qid, lane, what }) => ({ qid, lane, what })),
      notice: this.notice,
    };
  }

  private publish(): void {
    this.state = this.build();
    for (const l of this.listeners) l(this.state);
  }

  /** the status line's notice */
  setNotice(text: string): void {
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

  lanes(): Lane[] {
    return [...this.deps.lanes().values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** what a new cell of this lane will run, and in which folder (requests.ts) */
  commandFor(lane: Lane): { command: string; cwd: string } | null {
    return laneCommand(this.deps, lane);
  }

  private cell(id: string): Cell | undefined {
    return this.store.get().cells.find((c) => c.id === id);
  }

  /**
   * Start a run as a new cell. While another cell (or a bisection) runs it is queued instead and
   * starts when those before it have ended: the id is null then, the notice says so.
   */
  start(req: StartRequest): string | null {
    if (this.closing) return null;
    const lanes = this.deps.lanes();
    let base: Lane;
    try {
      base = getLane(lanes, req.lane);
    } catch (e) {
      // a lane whose file is broken says where (its path, field and position)
      this.setNotice(e instanceof LaneError ? e.message : `unknown lane "${req.lane}"`);
      return null;
    }
    // a bisection's own trials run in its slot; everything else waits its turn
    if (!req.bisect && (this.active || this.task)) {
      const q = this.queue.push(req, req.lane, describeRequest(req, this.store.get().cells));
      const ahead = this.active?.id ?? this.busyWith();
      this.setNotice(
        `${q.qid} ${req.lane} queued: it runs when ${ahead} has ended (x takes it off the queue)`,
      );
      return null;
    }
    if (this.active) {
      this.setNotice(`${this.active.id} is still running: one run at a time`);
      return null;
    }
    const built = laneFor(base, req);
    const id = nextCellId(this.store.get());
    const run = new CellRun(id, req, built, this.store, this.deps, new Map(lanes).set(req.lane, built.lane), {
      changed: () => this.publish(),
      save: (action) => this.save(action),
      ended: (r, out, error) => this.ended(r, base, out, error),
    });
    this.active = run;
    this.setNotice(`${id} ${req.lane}: starting`);
    return id;
  }

  private ended(run: CellRun, base: Lane, out: { go: boolean; verdict: string } | null, error?: string) {
    if (this.active === run) this.active = null;
    const { id, req } = run;
    if (!out) {
      this.setNotice(run.added ? `lane ${req.lane} failed: ${error}` : `lane ${req.lane}: ${error}`);
    } else if (run.unsaved) {
      // the notebook could not be written (its folder turned read-only): the verdict is said here
      this.setNotice(
        `${id} ${req.lane}: ${out.go ? 'GO' : 'NO-GO'} (${out.verdict}), not in the notebook: ${run.unsaved}`,
      );
    } else {
      this.setNotice(`${id} ${req.lane}: ${out.go ? 'GO' : 'NO-GO'} (${out.verdict})`);
      this.nextPhase(id, { ...req, phase: run.phase }, base, out.go);
    }
    this.drain();
  }

  /**
   * Write an action to the notebook. A file that cannot be written (its folder turned read-only, a
   * full disk) is said in the status line, naming the file and the cause; the notebook on disk and
   * in memory stay as they were and the view goes on. Returns the error, null once written.
   */
  private save(action: NotebookAction): string | null {
    try {
      this.store.dispatch(action);
      return null;
    } catch (e) {
      if (!(e instanceof FileError)) throw e;
      this.setNotice(e.message);
      return e.message;
    }
  }

  /** what holds the task slot, in words */
  private busyWith(): string {
    return this.checking ? `the box check ${this.checking}` : 'the bisection';
  }

  /** the next queued cell, once nothing runs */
  private drain(): void {
    if (this.active || this.task || this.closing) return;
    const q = this.queue.shift();
    if (q) this.start(q.req);
    else this.publish();
  }

  /** take a queued cell off the queue before it starts */
  unqueue(qid: string): void {
    const q = this.queue.remove(qid);
    this.setNotice(q ? `${qid} ${q.lane} taken off the queue` : `${qid} is not queued (it may have started)`);
  }

  /** smoke ladder: phase N+1 starts as its own linked cell only when phase N passed */
  private nextPhase(cellId: string, req: StartRequest, base: Lane, go: boolean): void {
    const phase = req.phase ?? 0;
    if (!base.phases || phase + 1 >= base.phases.length) return;
    if (!go) {
      this.setNotice(`${cellId} ${base.name}: phase ${phase + 1} failed; the ladder stops here`);
      return;
    }
    this.start({ lane: base.name, env: req.env, parent: cellId, link: 'phase', phase: phase + 1 });
  }

  /** resolves when the running cell (if any) has its verdict written */
  idle(): Promise<void> {
    return this.active?.done ?? Promise.resolve();
  }

  rerun(id: string): string | null {
    const c = this.cell(id);
    if (c?.kind === 'check') return this.check(c.lane.name, c.id);
    return c ? this.start(rerunRequest(c, this.deps.lanes())) : null;
  }

  /** a new cell from `id` with `edits` applied (value null: unset) */
  runEdited(id: string, edits: Record<string, string | null>): string | null {
    const c = this.cell(id);
    return c ? this.start(editedRequest(c, edits, this.deps.lanes())) : null;
  }

  delete(id: string): void {
    if (this.active?.id === id || this.checking === id) {
      this.setNotice(`${id} is running: it cannot be deleted now`);
      return;
    }
    if (this.save({ type: 'deleteCell', id }) === null)
      this.setNotice(`${id} deleted (its evidence folder stays on disk)`);
  }

  /**
   * A dashboard for a cell: the live session for the running one, else a re-attach to its run
   * dir (open-cell.ts).
   */
  async openCell(id: string): Promise<SessionController | null> {
    const c = this.cell(id);
    return c
      ? openCellView(c, { active: this.active, shown: this.shown, store: this.store, deps: this.deps })
      : null;
  }

  /** the report (Markdown + SVG) beside the notebook; returns the Markdown file */
  report(): string {
    return this.deps.writeReport(this.store.file);
  }

  /**
   * Run a long task that starts cells one after another (a bisection): at most one at a time, and
   * close() aborts it before stopping its running cell.
   */
  runTask(name: string, fn: (signal: AbortSignal) => Promise<unknown>): boolean {
    if (this.task || this.active) {
      this.setNotice(`${this.active?.id ?? this.busyWith()} is running: ${name} when it has ended`);
      return false;
    }
    const abort = new AbortController();
    const slot = { abort, done: Promise.resolve() as Promise<unknown> };
    this.task = slot;
    slot.done = fn(abort.signal)
      .catch((e: unknown) => this.setNotice(`${name} failed: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => {
        if (this.task === slot) this.task = null;
        this.drain();
      });
    return true;
  }

  /**
   * The box check of `lane` on the notebook's target, recorded as a check cell (`parent`: the check
   * cell it re-runs). It waits for nothing: while a run or another task holds the GPUs it is
   * refused, said in the notice.
   */
  check(lane: string, parent?: string): string | null {
    const host = {
      store: this.store,
      save: (a: NotebookAction) => this.save(a),
      setNotice: (t: string) => this.setNotice(t),
      runTask: (n: string, fn: (s: AbortSignal) => Promise<unknown>) => this.runTask(n, fn),
      checking: (id: string | null) => {
        this.checking = id;
        this.publish();
      },
    };
    return startCheck(host, this.deps, lane, parent);
  }

  /** `:bisect` on two marked cells: the search runs as this controller's task */
  bisect(a: string, b: string): void {
    const d = this.deps;
    const o = { lanes: d.lanes(), target: d.target, launchKey: d.launchKey, steps: d.steps };
    d.bisectCells(this, this.store, o, a, b);
  }

  /**
   * drop the queue, stop a running cell (its verdict is still written), then release the notebook.
   * Once: the view calls it while it still shows the stop countdown, the screen's exit path again.
   */
  close(): Promise<void> {
    this.closed ??= this.shutDown();
    return this.closed;
  }

  /** `q` again while closing: the running cell's trainer is killed now, not at its ladder's end */
  killNow(): void {
    void this.active?.session.killNow().catch(() => undefined);
  }

  private async shutDown(): Promise<void> {
    this.closing = true;
    this.queue.clear();
    this.task?.abort.abort();
    const a = this.active;
    if (a) {
      // stopped, whatever its launch would do on a plain quit (a detached or Slurm run is left)
      await (a.session.stopByUser ?? a.session.quit).call(a.session).catch(() => undefined);
      await a.done;
    }
    await this.task?.done;
    for (const r of this.shown) await r.close();
    this.store.close();
  }
}
