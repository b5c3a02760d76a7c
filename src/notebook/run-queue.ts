/**
 * Cells asked for while another one runs: a notebook runs its cells one at a time, in the order
 * they were asked for. Each waits here with a queue id (q1, q2, ...; the cell id is given when it
 * starts, since ids are never reused) and can be taken off before it starts. Held in memory: a
 * queued cell has no run and no evidence yet, so quitting drops it (the quit prompt says so).
 */
export interface Queued<R> {
  qid: string;
  req: R;
  lane: string;
  /** what makes it differ from a plain run of its lane: "toggle of c2: NSA_USE_FA2=0" */
  what: string;
}

export class RunQueue<R> {
  private items: Array<Queued<R>> = [];
  private next = 1;

  push(req: R, lane: string, what: string): Queued<R> {
    const q = { qid: `q${this.next++}`, req, lane, what };
    this.items.push(q);
    return q;
  }

  remove(qid: string): Queued<R> | undefined {
    const q = this.items.find((x) => x.qid === qid);
    if (q) this.items = this.items.filter((x) => x !== q);
    return q;
  }

  shift(): Queued<R> | undefined {
    return this.items.shift();
  }

  clear(): void {
    this.items = [];
  }

  list(): ReadonlyArray<Queued<R>> {
    return this.items;
  }
}
