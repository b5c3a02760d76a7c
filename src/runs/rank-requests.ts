/**
 * Per rank, what stack requests did: when it was last asked, how many requests are under way, when
 * its newest answered one was made. The stall prober asks whether a silent rank answered since its
 * silence began; a settled verdict waits only while the culprit's request is under way.
 */
export class RankRequests {
  /** when each rank was last asked (trainer clock), queued requests included */
  private readonly asked = new Map<number, number>();
  /** requests under way per rank */
  private readonly underWay = new Map<number, number>();
  /** when each rank's newest answered request was made (trainer clock) */
  private readonly answered = new Map<number, number>();

  askedAt(rank: number, s: number): void {
    this.asked.set(rank, s);
  }

  answeredAt(rank: number, s: number): void {
    this.answered.set(rank, s);
  }

  /** whether a request of `rank` made at or after `sinceS` (trainer clock) got a dump */
  answeredSince(rank: number, sinceS: number): boolean {
    return (this.answered.get(rank) ?? Number.NEGATIVE_INFINITY) >= sinceS;
  }

  /** when `rank` was last asked for its stack (trainer clock), if ever */
  lastAskedS(rank: number): number | undefined {
    return this.asked.get(rank);
  }

  /** whether a request of `rank` is still under way */
  busyWith(rank: number): boolean {
    return (this.underWay.get(rank) ?? 0) > 0;
  }

  /** `p` counts as under way for `rank` until it settles */
  counted<T>(rank: number, p: Promise<T>): Promise<T> {
    this.underWay.set(rank, (this.underWay.get(rank) ?? 0) + 1);
    const done = () => {
      const n = (this.underWay.get(rank) ?? 1) - 1;
      if (n > 0) this.underWay.set(rank, n);
      else this.underWay.delete(rank);
    };
    p.then(done, done);
    return p;
  }
}
