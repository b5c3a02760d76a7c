/**
 * The `s` key: a poor man's profiler. N stack samples of every rank, 1.5 s apart (SIGUSR1 dumps, or
 * py-spy without a handler), aggregated by the function of the innermost user frame (its lines as
 * the detail) with counts and shares, plus the hottest full stack from that frame outwards. The
 * samples are ordinary dump files in the run dir and their requests are in the probe file, so
 * `analyze` counts them too.
 */
import type { Evidence } from '../analysis/evidence.js';
import { hotFramesOf, whereIn } from '../analysis/silences.js';
import type { Frame } from '../ingest/events.js';
import { mainThread } from '../ingest/stackdump.js';
import type { StackSampler } from '../runs/stack-sampler.js';
import type { HotFramesView } from './state.js';

const GAP_MS = 1500;

export class HotFrameSampling {
  private readonly files = new Set<string>();
  private taken = 0;
  private unanswered = 0;
  private cancelled = false;
  running = false;

  constructor(
    private readonly sampler: StackSampler,
    private readonly evidence: Evidence,
    private readonly pids: Array<[number, number]>,
    private readonly count: number,
    private readonly onChange: () => void,
  ) {}

  async run(): Promise<void> {
    this.running = true;
    for (let i = 0; i < this.count && !this.cancelled; i++) {
      const started = Date.now();
      const got = await Promise.all(
        this.pids.map(([rank, pid]) => this.sampler.request(rank, pid, 'hot-frames')),
      );
      for (const g of got) {
        if (g.file !== undefined) this.files.add(g.file);
        else this.unanswered++;
      }
      this.taken++;
      this.onChange();
      const wait = GAP_MS - (Date.now() - started);
      if (wait > 0 && i + 1 < this.count) await new Promise((r) => setTimeout(r, wait));
    }
    this.running = false;
    this.onChange();
  }

  cancel(): void {
    this.cancelled = true;
  }

  view(): HotFramesView {
    const dumps = this.evidence.dumpEvents().filter((d) => this.files.has(d.file));
    const rows = hotFramesOf(dumps);
    const total = rows.reduce((n, r) => n + r.count, 0);
    let stack: Frame[] = [];
    const top = rows[0];
    if (top !== undefined) {
      const d = dumps.find((x) => {
        const w = whereIn(x);
        // the hottest line of the hottest function: its stack is the one most samples share
        return w !== null && w.file === top.file && w.line === top.line && w.function === top.function;
      });
      stack = d ? [...(mainThread(d)?.frames ?? [])].reverse() : [];
      // from where the program was, not the dump handler on top of it
      const at = stack.findIndex((f) => f.file === top.file && f.line === top.line);
      if (at > 0) stack = stack.slice(at);
    }
    return {
      running: this.running,
      taken: this.taken,
      of: this.count,
      unanswered: this.unanswered,
      rows: rows.map((r) => ({ ...r, share: total ? r.count / total : 0 })),
      hottestStack: stack,
    };
  }
}
