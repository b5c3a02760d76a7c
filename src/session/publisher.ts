/**
 * The outward side of the live session: an immutable snapshot rebuilt only when something changed,
 * handed to subscribers at most once per publish tick (the session's timer decides the rate), and
 * the one-line notice, which is shown for 8 s.
 */
const NOTICE_MS = 8000;

export class SnapshotPublisher<S> {
  private readonly subs = new Set<(s: S) => void>();
  private state: S;
  private changed = true;
  private noticeText: string | null = null;
  private noticeAt = 0;
  /** a notice set since the last publish */
  private noticeNew = false;
  /** publish ticks since the last publish */
  private ticks = 0;

  constructor(private readonly build: (nowMs: number) => S) {
    this.state = build(Date.now());
  }

  /** something the snapshot shows has changed: the next publish rebuilds it */
  markDirty(): void {
    this.changed = true;
  }

  setNotice(text: string): void {
    this.noticeText = text;
    this.noticeAt = Date.now();
    this.changed = true;
    this.noticeNew = true;
  }

  /**
   * the publish timer's tick: published every `every` ticks, or at once when a notice waits (what
   * a key answered is never held back by a slower pace)
   */
  publishOnTick(every: number): void {
    if (++this.ticks < every && !this.noticeNew) return;
    this.ticks = 0;
    this.publishIfDirty();
  }

  /** the snapshot last built, whether or not anyone was handed it (no build) */
  current(): S {
    return this.state;
  }

  /** the notice while it is shown, else null */
  notice(nowMs = Date.now()): string | null {
    if (this.noticeText && nowMs - this.noticeAt > NOTICE_MS) this.noticeText = null;
    return this.noticeText;
  }

  /**
   * Rebuilt and handed out only when someone subscribes: a headless run reads the snapshot when it
   * asks for it (get), and at 512 ranks building one a second for nobody took a fifth of the
   * engine's time while a hang was being concluded.
   */
  publishIfDirty(): void {
    if (!this.changed || this.subs.size === 0) return;
    this.changed = false;
    this.noticeNew = false;
    this.state = this.build(Date.now());
    for (const cb of this.subs) cb(this.state);
  }

  /**
   * the snapshot: the one last handed out, or while nobody subscribes, rebuilt first when something
   * changed since it was built (a subscriber is never skipped by a build it was not handed)
   */
  get(): S {
    if (this.changed && this.subs.size === 0) {
      this.changed = false;
      this.state = this.build(Date.now());
    }
    return this.state;
  }

  subscribe(cb: (s: S) => void): () => void {
    this.subs.add(cb);
    return () => this.subs.delete(cb);
  }
}
