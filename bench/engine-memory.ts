/**
 * The engine's memory on a long run, in its own process (run with --expose-gc): 1 M steps × 8
 * ranks of heartbeats (step_start beat, progress with loss and toks/s, step_end) and rank 0's step
 * lines go through the live model chunk by chunk, as the file followers deliver them. RSS after a
 * full GC at every 1 %; the slope over the second half (least squares over its 50 samples: RSS
 * after a GC still jumps by several MB from one sample to the next, as V8 and the allocator keep or
 * return pages, so a few samples would read that noise as a trend) is MB per hour of a run at 20
 * steps/s.
 * Prints one JSON line.
 */
import { LiveModel } from '../src/session/live-model.js';

const STEPS = Number(process.argv[2] ?? 1_000_000);
const RANKS = Number(process.argv[3] ?? 8);
const STEPS_PER_S = Number(process.argv[4] ?? 20);
/** steps per chunk: about 2,000 records a rank's chunk at 8 ranks, fewer at scale (a poll's worth) */
const BLOCK = RANKS > 64 ? 10 : 500;

const gc = (globalThis as { gc?: () => void }).gc;
const rss = () => {
  gc?.();
  gc?.();
  return process.memoryUsage().rss / 2 ** 20;
};

function records(rank: number, from: number, to: number, t0: number): string {
  let out = '';
  for (let step = from; step < to; step++) {
    const ts = t0 + step / STEPS_PER_S;
    const loss = 5.7 + Math.sin(step / 50) * 0.05;
    out += `{"ts": ${ts}, "iso": "2026-11-22T02:44:33.476921Z", "pid": 4000, "rank": ${rank}, "step": ${step}, "msg": "beat", "gpu_mem_alloc": 92, "gpu_mem_reserved": 412, "phase": "step_start"}\n`;
    out += `{"ts": ${ts + 0.045}, "iso": "2026-11-22T02:44:33.476921Z", "pid": 4000, "rank": ${rank}, "step": ${step}, "msg": "progress", "gpu_mem_alloc": 92, "gpu_mem_reserved": 412, "loss": ${loss}, "toks_per_s": ${70000 + (step % 13) * 100}}\n`;
    out += `{"ts": ${ts + 0.046}, "iso": "2026-11-22T02:44:33.476921Z", "pid": 4000, "rank": ${rank}, "step": ${step}, "msg": "step_end", "gpu_mem_alloc": 92, "gpu_mem_reserved": 412, "phase": "end"}\n`;
  }
  return out;
}

function main(): void {
  const m = new LiveModel();
  const t0 = 1_795_315_473;
  const nowMs = () => (t0 + 1) * 1000;
  for (let r = 0; r < RANKS; r++)
    m.onFileChunk(
      `heartbeat_rank${r}.jsonl`,
      Buffer.from(`{"ts": ${t0}, "pid": 4000, "rank": ${r}, "step": 0, "msg": "boot", "phase": "start"}\n`),
      nowMs(),
    );
  const samples: Array<{ steps: number; rssMB: number }> = [];
  const t = performance.now();
  for (let from = 1; from <= STEPS; from += BLOCK) {
    const to = Math.min(STEPS + 1, from + BLOCK);
    for (let r = 0; r < RANKS; r++)
      m.onFileChunk(`heartbeat_rank${r}.jsonl`, Buffer.from(records(r, from, to, t0)), nowMs());
    let so = '';
    for (let step = from; step < to; step++)
      so += `step ${step} | loss 5.7012 | lr 2.00e-04 | toks/s 70000\n`;
    m.onFileChunk('stdout.log', Buffer.from(so), nowMs());
    if ((to - 1) % (STEPS / 100) === 0) samples.push({ steps: to - 1, rssMB: rss() });
  }
  // what a snapshot asks of it, and the verdict of the whole run
  const result = m.result({ nowMs: (t0 + STEPS / STEPS_PER_S + 1) * 1000, processAlive: false, exitCode: 0 });
  const series = m.digest.chartSeries();
  const end = rss();
  // least squares over the second half: RSS after a GC still moves by ±15 MB from one sample to
  // the next (V8 sizes its heap as it likes); the trend is what a leak would show
  const half = samples
    .filter((s) => s.steps >= STEPS / 2)
    .map((s) => [s.steps / STEPS_PER_S / 3600, s.rssMB]);
  const mx = half.reduce((a, [h]) => a + h!, 0) / half.length;
  const my = half.reduce((a, [, m]) => a + m!, 0) / half.length;
  const slope =
    half.reduce((a, [h, m]) => a + (h! - mx) * (m! - my), 0) / half.reduce((a, [h]) => a + (h! - mx) ** 2, 0);
  console.log(
    JSON.stringify({
      steps: STEPS,
      ranks: RANKS,
      rssMBAfter1MSteps: end,
      rssSlopeMBPerHour: Number.isFinite(slope) ? slope : 0,
      samples,
      ingestSeconds: (performance.now() - t) / 1000,
      stepsReached: result.stepsReached,
      verdict: result.verdict,
      chartPoints: series.loss.length,
      chartTotal: series.lossTotal,
    }),
  );
}

main();
