/**
 * The one writer of a run's probe file (`nsa-dbg-probes.jsonl`): what nsa-dbg learns on the box (a
 * rank's /proc facts, each stack request's outcome, the teardown snapshot, an OOM kill), read back
 * by the run-folder reader like any file. Records asked for while an append is under way go out
 * together in the next one: one command per flush, not one per record (at a confirmed hang of 256
 * ranks the prober files ~500 records a round; one shell each, in a row, fell further behind every
 * round and the run never concluded). On this machine it is a file append, elsewhere a command;
 * each append is whole lines, in order.
 */
import type { ProbeEvent } from '../ingest/events.js';
import { PROBES_FILE, probeLine } from '../ingest/probes.js';
import type { Target } from '../targets/target.js';

/** the most record bytes one append carries (one argument stays well under Linux's 128 KB) */
const APPEND_MAX_BYTES = 64 * 1024;

export class ProbeFile {
  private writes: Promise<void> = Promise.resolve();
  /** records not yet appended (the next append takes them all) */
  private pending: string[] = [];

  constructor(
    private readonly target: Target,
    private readonly runDir: string,
  ) {}

  /** append one record; resolves once it is written (or its append failed: a probe is a bonus) */
  record(e: ProbeEvent): Promise<void> {
    this.pending.push(probeLine(e));
    if (this.pending.length === 1) this.writes = this.writes.then(() => this.appendPending());
    return this.writes;
  }

  /** resolves once every record asked for so far is written */
  async flushed(): Promise<void> {
    // an append may chain the next one (records that came meanwhile): wait for the chain's end
    for (let w = this.writes; ; w = this.writes) {
      await w;
      if (w === this.writes) return;
    }
  }

  private async appendPending(): Promise<void> {
    let n = 0;
    let size = 0;
    while (n < this.pending.length && (n === 0 || size + this.pending[n]!.length <= APPEND_MAX_BYTES))
      size += this.pending[n++]!.length;
    const text = this.pending.splice(0, n).join('');
    if (this.pending.length > 0) this.writes = this.writes.then(() => this.appendPending());
    if (text === '') return;
    const path = `${this.runDir}/${PROBES_FILE}`;
    const { target } = this;
    await (target.appendFile
      ? target.appendFile(path, text)
      : target.exec(['sh', '-c', 'printf "%s" "$1" >> "$2"', 'sh', text, path])
    )
      .then(() => undefined)
      .catch(() => undefined);
  }
}
