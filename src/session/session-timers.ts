/**
 * The session's clocks. Ages and the verdict change with time alone, so the dashboard ticks once a
 * second and publishes what changed, at most every `publishMs` (at the default rate one timer does
 * both: an idle dashboard wakes once a second, not twice). Silent ranks are checked on the box as
 * soon as they become suspect: every 250 ms while a rank is silent past its threshold (or a check is
 * under way), once a second otherwise.
 */
export class SessionTimers {
  private intervals: NodeJS.Timeout[] = [];
  private probeTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly o: {
      publishMs: number;
      tick: () => void;
      publish: () => void;
      /** whether a check is due soon (250 ms) rather than in a second */
      probeBusy: () => boolean;
      probe: () => void;
    },
  ) {}

  start(): void {
    const { publishMs, tick, publish } = this.o;
    if (publishMs === 1000)
      this.intervals.push(
        setInterval(() => {
          tick();
          publish();
        }, 1000),
      );
    else this.intervals.push(setInterval(publish, publishMs), setInterval(tick, 1000));
    for (const t of this.intervals) t.unref?.();
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    if (this.stopped) return;
    const t = setTimeout(
      () => {
        this.o.probe();
        this.scheduleProbe();
      },
      this.o.probeBusy() ? 250 : 1000,
    );
    t.unref?.();
    this.probeTimer = t;
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.intervals) clearInterval(t);
    this.intervals = [];
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
  }
}
