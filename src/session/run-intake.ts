/**
 * What arrives from one run's files, into its evidence model: each chunk stamped by the arrival
 * clock (the clock file is the session's own, handed to the reader here), the trainer's out_dir
 * watched for a first file, and a dump file that answers the user's request for one.
 */
import { clockLine } from '../ingest/clock.js';
import { CLOCK_FILE } from '../ingest/run-files.js';
import { evidenceOptionsOf, type Lane } from '../lanes/lane.js';
import type { RunSpec } from '../runs/launcher.js';
import { ArrivalClock } from './arrival-clock.js';
import { LiveModel } from './live-model.js';
import { OutDirWatch } from './out-dir-watch.js';

export interface IntakeEvents {
  /** anything shown changed */
  changed(): void;
  /** a file arrived (a rank's pid may be in it: its process is read while it is there) */
  arrived(): void;
  /** a dump file answered the user's request for one */
  dumpArrived(name: string): void;
}

export class RunIntake {
  model: LiveModel;
  private clock = new ArrivalClock(null);
  private outDir: OutDirWatch | null = null;
  /** the user asked for a dump and signals went out: the next dump file answers it */
  awaitingDump = false;

  constructor(
    lane: Lane,
    private readonly on: IntakeEvents,
  ) {
    this.model = new LiveModel({ stepRegex: lane.stepRegex, ...evidenceOptionsOf(lane.detector) });
  }

  /**
   * The run's evidence model, judged with the settings it was started with and its folder read as
   * its launcher laid it out; the clock of its output (`localDir`: the run's folder on this
   * machine, where the clock file is kept), read back first on an attach.
   */
  takeModelFor(spec: RunSpec, lane: Lane, localDir: string | null, attached: boolean): void {
    const model = new LiveModel({
      stepRegex: spec.stepRegex ?? lane.stepRegex,
      ...evidenceOptionsOf(spec.detector ?? lane.detector),
      layout: spec.layout ?? {},
      timed: true,
    });
    this.clock = new ArrivalClock(localDir, attached);
    for (const r of this.clock.existing())
      model.onFileChunk(CLOCK_FILE, Buffer.from(clockLine(r)), Date.now());
    this.model = model;
    this.outDir = OutDirWatch.of(spec, Date.now());
  }

  onFileChunk(name: string, chunk: Buffer, replace?: boolean): void {
    // the clock is the session's own: written and handed to the reader here, never followed
    if (name === CLOCK_FILE) return;
    const model = this.model;
    const newest = model.digest.newestDumpName;
    const now = Date.now();
    const tick = this.clock.arrived(name, chunk, model.trainerNowS(now));
    if (tick !== null) model.onFileChunk(CLOCK_FILE, tick, now);
    model.onFileChunk(name, chunk, now, replace);
    this.on.arrived();
    this.outDir?.noteFile(name);
    const dump = model.digest.newestDumpName;
    if (dump !== newest && dump && this.awaitingDump) {
      this.awaitingDump = false;
      this.on.dumpArrived(dump);
    }
    this.on.changed();
  }

  /** the out_dir watch's words, once, a minute into a running run with nothing from there */
  quietOutDir(now: number, running: boolean): string | null {
    return this.outDir?.check(now, running) ?? null;
  }
}
