/**
 * Per rank, what stack requests did: when it was last asked, when its newest answered one was made.
 * The stall prober asks whether a silent rank answered since its silence began.
 */
export class RankRequests {
  /** when each rank was last asked (trainer clock), queued requests included */
  private readonly asked = new Map<number, number>();
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
}
