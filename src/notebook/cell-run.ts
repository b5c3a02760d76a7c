/**
 * One cell's run inside the notebook controller: the lane (with its phase) turned into the lane
 * it runs with, the cell written as soon as the run exists, kept up to date, and its verdict
 * written when the run has ended. Its session stays open while a dashboard shows it, so that view
 * ends the way the plain dashboard does (exited, the verdict, the clock stopped) instead of
 * freezing; it is disposed once the run has ended and no dashboard holds it.
 */
import { dirname } from 'node:path';
import type { Lane } from '../lanes/lane.js';
import type { RunSpec } from '../runs/launcher.js';
import { finishedPatch, startedCell } from './cell-build.js';
import type { CellSession, NotebookDeps, StartRequest } from './controller-types.js';
import { liveLine } from './live-line.js';
import type { NotebookAction } from './reducer.js';
import { proofOf, type RunProof } from './run-proof.js';
import type { NotebookStore } from './store.js';

/** the lane a request runs with: the lane, its env replaced, a phase's steps applied */
export function laneFor(base: Lane, req: StartRequest): { lane: Lane; phase?: number; phaseSteps?: number } {
  // a lane with phases starts at its first; a linked cell keeps its parent's phase
  const phase = req.phase ?? (base.phases?.length ? 0 : undefined);
  const phaseSteps = phase !== undefined ? base.phases?.[phase]?.steps : undefined;
  const lane: Lane = {
    ...base,
    env: req.env ?? base.env,
    ...req.trial,
    ...(phaseSteps !== undefined
      ? { steps: phaseSteps, acceptance: { ...base.acceptance, steps: phaseSteps } }
      : {}),
  };
  return { lane, phase, phaseSteps };
}

export interface CellRunHooks {
  /** the cell, its live line or its state changed */
  changed(): void;
  /** write to the notebook: null once written, else why not (said on the status line already) */
  save(action: NotebookAction): string | null;
  /** the run has its verdict (or failed): `go` null when it failed */
  ended(run: CellRun, outcome: { go: boolean; verdict: string } | null, error?: string): void;
}

export class CellRun {
  readonly session: CellSession;
  readonly done: Promise<void>;
  added = false;
  /** the notebook could not be written when the cell was to be added or finished: why */
  unsaved: string | null = null;
  /** the status line: step, loss, toks/s, SUSPECT/HANG */
  live: string | null = null;
  /** the stop ladder's countdown while the run is being stopped */
  stopping: string | null = null;
  /** dashboards open on this session */
  private views = 0;
  private concluded = false;
  private disposed = false;

  constructor(
    readonly id: string,
    readonly req: StartRequest,
    private readonly built: ReturnType<typeof laneFor>,
    private readonly store: NotebookStore,
    private readonly deps: NotebookDeps,
    runLanes: Map<string, Lane>,
    private readonly hooks: CellRunHooks,
  ) {
    this.session = deps.openSession({
      lane: req.lane,
      lanes: runLanes,
      evidenceRoot: store.evidenceDir,
      steps: built.phaseSteps ?? deps.steps,
    });
    this.live = liveLine(id, req.lane, this.session.getState());
    // the cell appears as soon as the run exists, so the list shows it running
    const unsubscribe = this.session.subscribe((s) => {
      const run = this.session.currentRun();
      if (run) this.addCell(run.spec, run.spec.runDir);
      const line = liveLine(id, req.lane, s);
      const stopping = s.stopping ?? null;
      if (line !== this.live || stopping !== this.stopping) {
        this.live = line;
        this.stopping = stopping;
        hooks.changed();
      }
    });
    this.done = deps.runToVerdict(this.session).then(
      async (out) => {
        unsubscribe();
        const run = this.session.currentRun();
        const proof = await this.proof(run?.spec.env ?? {});
        if (run) this.addCell(run.spec, out.localDir);
        this.finish();
        const outcome = { go: out.go, verdict: out.verdict };
        if (this.unsaved) return hooks.ended(this, outcome);
        if (!this.added) return hooks.ended(this, null, 'the run did not start');
        this.unsaved = hooks.save({
          type: 'updateCell',
          id,
          patch: {
            ...finishedPatch(out, out.localDir, run?.spec.env ?? {}, new Date().toISOString()),
            ...(proof ? { proof } : {}),
          },
        });
        hooks.ended(this, outcome);
      },
      (e: unknown) => {
        unsubscribe();
        this.finish();
        if (this.added) hooks.save({ type: 'updateCell', id, patch: { state: 'failed' } });
        hooks.ended(this, null, e instanceof Error ? e.message : String(e));
      },
    );
  }

  /** what the ranks' processes saw against what this run was meant to have (null: not readable here) */
  private async proof(env: Record<string, string>): Promise<RunProof | null> {
    if (!this.session.processStarts) return null;
    const starts = await this.session.processStarts().catch(() => []);
    const intended = this.req.expect ?? { env };
    return proofOf(intended, starts);
  }

  get phase(): number | undefined {
    return this.built.phase;
  }

  private addCell(spec: RunSpec, localDir: string): void {
    if (this.added || this.unsaved) return;
    const { req, built } = this;
    // a notebook that cannot be written (its folder turned read-only): the run goes on unrecorded
    this.unsaved = this.hooks.save({
      type: 'addCell',
      cell: {
        ...(req.bisect ? { bisect: req.bisect } : {}),
        ...startedCell({
          spec,
          lane: built.lane,
          target: this.deps.target,
          localDir,
          notebookDir: dirname(this.store.file),
          parent: req.parent,
          link: req.link,
          phase: built.phase,
        }),
      },
    });
    this.added = this.unsaved === null;
  }

  private finish(): void {
    this.live = null;
    this.concluded = true;
    this.disposeIfUnused();
  }

  /** a dashboard opens on this run; the function it returns closes it */
  openView(): () => void {
    this.views++;
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      this.views--;
      this.disposeIfUnused();
    };
  }

  private disposeIfUnused(): void {
    if (this.disposed || !this.concluded || this.views > 0) return;
    this.disposed = true;
    void this.session.dispose?.().catch(() => undefined);
  }

  /** the notebook closes: whatever shows it, the session goes */
  async close(): Promise<void> {
    this.views = 0;
    this.disposeIfUnused();
  }
}
