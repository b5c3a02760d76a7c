/**
 * A trainer with its own out_dir (its config's, the lane's): where nsa-dbg copies it into the run,
 * and whether anything arrived from it. A minute without a file from there is said once, with where
 * nsa-dbg is looking (a config's out_dir that is not the one the trainer uses is the usual cause).
 */
import { OUT_COPY_DIR } from '../ingest/run-files.js';
import type { Lane } from '../lanes/lane.js';
import type { RunSpec } from '../runs/launcher.js';
import { trainerOutDir } from '../runs/out-dir-of.js';
import type { Target } from '../targets/target.js';

/** how long a run may go without a file from the trainer's own out_dir before the user is told */
const OUT_DIR_QUIET_MS = 60_000;

/** the spec with the trainer's own out_dir, when it has one: copied into the run folder */
export async function withOutDir(
  target: Target,
  spec: RunSpec,
  lane: Lane,
  outDirOption: string | undefined,
): Promise<RunSpec> {
  const local = target.kind === 'local' ? process.env : {};
  const c = await trainerOutDir(target, spec, lane, outDirOption, local);
  if (c.dir === spec.runDir || c.from === 'run dir') return spec;
  return {
    ...spec,
    outDir: c.dir,
    outDirFrom: { from: c.from, ...(c.config ? { config: c.config } : {}) },
    layout: { ...spec.layout, outCopy: OUT_COPY_DIR },
  };
}

export class OutDirWatch {
  private seen = false;
  private said = false;

  constructor(
    private readonly spec: RunSpec,
    private readonly since: number,
  ) {}

  /** a run whose trainer writes into its run dir has nothing to watch */
  static of(spec: RunSpec, now: number): OutDirWatch | null {
    return spec.outDir === spec.runDir ? null : new OutDirWatch(spec, now);
  }

  /** a file chunk arrived: from the trainer's out_dir, it is where the trainer writes */
  noteFile(name: string): void {
    if (name.startsWith(`${OUT_COPY_DIR}/`)) this.seen = true;
  }

  /** what to tell the user once, a minute into a running run with nothing from there; else null */
  check(now: number, running: boolean): string | null {
    if (this.seen || this.said || !running || now - this.since < OUT_DIR_QUIET_MS) return null;
    this.said = true;
    const s = this.spec;
    return `no heartbeats or dumps in ${s.outDir} after ${Math.round(OUT_DIR_QUIET_MS / 1000)} s — is that the trainer's out_dir? (${s.outDirFrom?.config ?? s.outDirFrom?.from ?? ''})`;
  }
}
