/**
 * Stack-hook requests whose `# in-python` mark may still come on their own. A stop before a window
 * ends could make Python run only because the stop freed a rank blocked in native code, and that
 * would read as the rank's answer; so a stop waits until every window is over (StackSampler.quiet).
 * A window ends when its dump says whether Python ran, or when the time its marks allow is over:
 * a hook that marks `# seen` is timed from that mark (a second), which a loaded box delays; without
 * the dump read back, a second after the send at the latest.
 */
import { IN_PYTHON_S, SEEN_WAIT_S } from '../ingest/stack-log-format.js';

/** how far our estimate of the trainer's clock may lag it (it is bounded by the files' arrival) */
export const CLOCK_SLACK_S = 0.5;

export interface HookWindowsOptions {
  /** the trainer's clock now, epoch seconds */
  trainerNowS: () => number;
  /** a dump the evidence holds, by its name (a stack hook's dump: `<log>@<request id>`) */
  dumpNamed?: (name: string) => { inPython?: boolean; inPythonBy?: number } | undefined;
}

export class HookWindows {
  /** dump name → when its window ends at the latest (trainer clock) */
  private readonly open = new Map<string, number>();

  constructor(private readonly o: HookWindowsOptions) {}

  /** the signal for the dump `name` just went out */
  sent(name: string): void {
    this.anyOpen(); // drops the windows that are over: the map stays as small as the last seconds' requests
    this.open.set(name, this.o.trainerNowS() + SEEN_WAIT_S + IN_PYTHON_S + CLOCK_SLACK_S);
  }

  /** whether a recent request's answer may still come */
  anyOpen(): boolean {
    const now = this.o.trainerNowS();
    for (const [name, latest] of this.open) {
      const d = this.o.dumpNamed?.(name);
      const end =
        d === undefined ? latest - SEEN_WAIT_S : Math.min(latest, (d.inPythonBy ?? 0) + CLOCK_SLACK_S);
      if (d?.inPython !== undefined || now >= end) this.open.delete(name);
    }
    return this.open.size > 0;
  }
}
