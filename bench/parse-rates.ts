/**
 * The parse rates of \`npm run bench\`: the engine's, on generated input, next to a plain Python
 * \`json.loads\`-per-line loop over the same heartbeat file, measured in the same run.
 *   heartbeat: 1 M lines (nsa-vibe's beat / progress with aux stats / step_end mix) read from the
 *              file in chunks through HeartbeatReader
 *   stdout:    1 M lines (step lines, tagged banners, warnings, ANSI-coloured and \r progress lines)
 *              read from the file in chunks through LineSplitter + StdoutParser, as a run's
 *              stdout.log is read (its progress redraws parsed as they come)
 * Best of a few interleaved rounds each (the machine may be shared), one core.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeartbeatReader } from '../src/ingest/heartbeat.js';
import { isRedraw, LineSplitter } from '../src/ingest/line-splitter.js';
import { StdoutParser } from '../src/ingest/stdout-parser.js';
import { READ_CHUNK } from '../src/runs/analyze-dir.js';

const LINES = 1_000_000;
/** the read size of the file followers (LocalTail) and of `analyze` (READ_CHUNK) */
const CHUNK = READ_CHUNK;
const REPS = 3;

function heartbeatFile(path: string): void {
  const out: string[] = [];
  let ts = 1795315473.476858;
  const base = (step: number, msg: string) =>
    `{"ts": ${ts}, "iso": "2026-11-22T02:44:33.476921Z", "pid": 4162, "rank": 0, "step": ${step}, "msg": "${msg}", "gpu_mem_alloc": 92, "gpu_mem_reserved": 412`;
  out.push(`${base(0, 'boot')}, "phase": "start"}`);
  for (let step = 1; out.length < LINES; step++) {
    ts += 0.0011;
    out.push(`${base(step, 'beat')}, "phase": "step_start"}`);
    ts += 6.4 + (step % 7) * 0.1234567;
    const loss = 5.7 + (step % 13) * 0.0012345678;
    const toks = 66.37695403491539 + (step % 11);
    out.push(
      `${base(step, 'progress')}, "loss": ${loss}, "toks_per_s": ${toks}, "gate_entropy_mean": 1.0984915494918823, "gate_entropy_min": 1.0980048179626465, "gate_max_gate": 0.3496183156967163, "gate_collapse_frac": 0.0, "gate_branch_shares": [0.3290204703807831, 0.3321830630302429, 0.3387964963912964], "fb_selection_triton_fails": 0, "fb_selection_cuda_fails": 0, "fb_selection_pack_fails": 0, "fb_selection_mask_fails": 0, "fb_compressed_fa2_fails": 0, "fb_sliding_fa2_fails": 0, "fb_total_fallbacks": 0, "sel_k_mean": 169.0, "sel_k_max": 256, "sel_rows": 1024, "sel_pct_at_max": 0.017578125}`,
    );
    ts += 0.0006;
    out.push(`${base(step, 'step_end')}, "phase": "end"}`);
  }
  writeFileSync(path, `${out.slice(0, LINES).join('\n')}\n`);
}

function stdoutFile(path: string): void {
  const out: string[] = [];
  for (let i = 1; out.length < LINES; i++) {
    const n = String(i).padStart(4, '0');
    out.push(`step ${n} | loss 5.${7000 + (i % 999)} | lr 2.00e-05 | toks/s ${60 + (i % 30)}`);
    out.push(`[debug] step ${i}: input shape torch.Size([1, 512]), seq_len 512`);
    if (i % 2 === 0) out.push(`\x1b[32mstep ${n}\x1b[0m | loss 5.7014 | lr 2.00e-05 | toks/s 66`);
    else out.push(`loading shards  ${i % 100}%\rloading shards 100%`);
    out.push('  with torch.cuda.amp.autocast(dtype=amp_dtype):');
    out.push('[warn] Gate/fallback stats extraction failed: index out of range');
  }
  writeFileSync(path, `${out.slice(0, LINES).join('\n')}\n`);
}

/**
 * A trainer no format knows (minGPT's line, learned from the output: step-shape-learner.ts), with
 * the other lines such a trainer prints between its step lines.
 */
function learnedFile(path: string): void {
  const out: string[] = [];
  for (let i = 0; out.length < LINES; i++) {
    out.push(
      `iter_dt ${(28 + (i % 50) / 10).toFixed(2)}ms; iter ${i}: train loss ${(3 - (i % 1000) / 1000).toFixed(5)}`,
    );
    out.push(i % 2 === 0 ? 'saving model' : `  warnings.warn("epoch ${i} of 3 done", UserWarning)`);
  }
  writeFileSync(path, `${out.slice(0, LINES).join('\n')}\n`);
}

/** Read a file in chunks, timing only the loop; returns [items counted, seconds]. */
function timeChunks(path: string, onChunk: (b: Buffer) => number, finish: () => number): [number, number] {
  const fd = openSync(path, 'r');
  const t0 = process.hrtime.bigint();
  let n = 0;
  for (;;) {
    const buf = Buffer.allocUnsafe(CHUNK);
    const got = readSync(fd, buf, 0, CHUNK, null);
    if (got === 0) break;
    n += onChunk(buf.subarray(0, got));
  }
  n += finish();
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  closeSync(fd);
  return [n, s];
}

function heartbeatRate(path: string): number {
  const r = new HeartbeatReader();
  const [n, s] = timeChunks(
    path,
    (b) => r.push(b).length,
    () => r.flush().length,
  );
  if (n !== LINES || r.skippedLines !== 0)
    throw new Error(`heartbeat: parsed ${n}, skipped ${r.skippedLines}`);
  return n / s;
}

function stdoutRate(path: string): number {
  const split = new LineSplitter({ progress: true });
  const parser = new StdoutParser();
  let lines = 0;
  let events = 0;
  const [, s] = timeChunks(
    path,
    (b) => {
      for (const l of split.push(b)) {
        if (!isRedraw(l)) lines++;
        events += parser.push(l).length;
      }
      return 0;
    },
    () => {
      for (const l of split.flush()) events += parser.push(l).length;
      return 0;
    },
  );
  // one event a line at least (a learned shape adds its own and re-reads the lines that revealed it)
  if (lines !== LINES || events < LINES) throw new Error(`stdout: ${lines} lines, ${events} events`);
  return lines / s;
}

const PY = `
import json, sys, time
best = 0.0
for _ in range(int(sys.argv[2])):
    t = time.perf_counter(); n = 0
    with open(sys.argv[1], 'rb') as f:
        for line in f:
            json.loads(line); n += 1
    best = max(best, n / (time.perf_counter() - t))
print(best)
`;

function pythonRate(path: string, reps: number): number | null {
  const r = spawnSync('python3', ['-c', PY, path, String(reps)], { encoding: 'utf8' });
  if (r.status !== 0) {
    console.error(`python3 failed: ${r.stderr || r.error?.message}`);
    return null;
  }
  return Number(r.stdout.trim());
}

const fmt = (v: number) => `${(v / 1e6).toFixed(2)} M lines/s`;

export function parseRates(): {
  analyzeSpeedupVsPython: number | null;
  logLinesPerSec: number;
  learnedLinesPerSec: number;
} {
  const dir = mkdtempSync(join(tmpdir(), 'nsa-dbg-bench-'));
  try {
    const hb = join(dir, 'heartbeat_rank0.jsonl');
    const so = join(dir, 'stdout.log');
    const learned = join(dir, 'learned.log');
    heartbeatFile(hb);
    stdoutFile(so);
    learnedFile(learned);
    // interleaved rounds, best of each: the machine is shared, so both sides get the same chances
    let hbBest = 0;
    let soBest = 0;
    let learnedBest = 0;
    let py: number | null = 0;
    for (let i = 0; i < REPS; i++) {
      hbBest = Math.max(hbBest, heartbeatRate(hb));
      soBest = Math.max(soBest, stdoutRate(so));
      learnedBest = Math.max(learnedBest, stdoutRate(learned));
      const p = pythonRate(hb, 1);
      py = p === null || py === null ? null : Math.max(py, p);
    }
    const ratio = py === null ? null : hbBest / py;
    console.log(`heartbeat  engine ${fmt(hbBest)}   python json.loads loop ${py === null ? 'n/a' : fmt(py)}`);
    console.log(`stdout     known formats ${fmt(soBest)}   a learned step line ${fmt(learnedBest)}`);
    return { analyzeSpeedupVsPython: ratio, logLinesPerSec: soBest, learnedLinesPerSec: learnedBest };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
