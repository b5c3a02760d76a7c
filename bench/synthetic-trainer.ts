/**
 * The bench's trainer: `RANKS` ranks writing nsa-vibe's heartbeat records (step_start beat,
 * progress with loss and toks/s, step_end) at `--steps-per-s`, and `--lines-per-s` lines of
 * stdout (rank 0's step line each step, the rest debug chatter), into $NSA_DBG_OUT_DIR like a
 * trainer nsa-dbg launched. `--idle`: prints and writes nothing at all. Unknown arguments (a
 * lane's own) are ignored. Timers fire every 50 ms; each tick writes what is due.
 */
import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

const RANKS = arg('--ranks', 8);
const STEPS_PER_S = arg('--steps-per-s', 20);
const LINES_PER_S = arg('--lines-per-s', 2000);
const SECONDS = arg('--seconds', 3600);
const IDLE = process.argv.includes('--idle');
/** `--nodes N`: the ranks recorded on N nodes (nodes.jsonl), as a cluster's agents record them */
const NODES = arg('--nodes', 1);
const dir = process.env.NSA_DBG_OUT_DIR ?? process.env.NSA_DBG_RUN_DIR ?? '.';
const iso = () => new Date().toISOString().replace('Z', '000Z');

function record(rank: number, step: number, msg: string, phase: string, extra = ''): string {
  const ts = Date.now() / 1000;
  return `{"ts": ${ts}, "iso": "${iso()}", "pid": ${process.pid}, "rank": ${rank}, "step": ${step}, "msg": "${msg}", "gpu_mem_alloc": 92, "gpu_mem_reserved": 412, "phase": "${phase}"${extra}}\n`;
}

const hb = (rank: number) => join(dir, `heartbeat_rank${rank}.jsonl`);
// idle: not even a boot record (a silent rank would become suspect and be checked on the box)
if (!IDLE) for (let r = 0; r < RANKS; r++) appendFileSync(hb(r), record(r, 0, 'boot', 'start'));
if (!IDLE && NODES > 1) {
  const per = Math.ceil(RANKS / NODES);
  const lines = Array.from({ length: RANKS }, (_, r) => {
    const task = Math.floor(r / per);
    const node = `node-${String(task).padStart(2, '0')}`;
    return `${JSON.stringify({ task, node, pid: process.pid, rank: r, localRank: r % per })}\n`;
  });
  appendFileSync(join(process.env.NSA_DBG_RUN_DIR ?? dir, 'nodes.jsonl'), lines.join(''));
}

// the stop policy's first step: nsa-vibe polls .HALT between steps and exits cleanly
setInterval(() => {
  if (existsSync(join(dir, '.HALT'))) process.exit(0);
}, 200);

if (IDLE) {
  setTimeout(() => process.exit(0), SECONDS * 1000);
} else {
  const t0 = Date.now();
  let step = 0;
  let lines = 0;
  const timer = setInterval(() => {
    const elapsed = (Date.now() - t0) / 1000;
    if (elapsed > SECONDS) {
      clearInterval(timer);
      process.exit(0);
    }
    let out = '';
    while (step < Math.floor(elapsed * STEPS_PER_S)) {
      step++;
      const loss = 5.7 + Math.sin(step / 50) * 0.05 + (step % 7) * 0.001;
      const toks = 70000 + (step % 13) * 100;
      for (let r = 0; r < RANKS; r++) {
        appendFileSync(
          hb(r),
          record(r, step, 'beat', 'step_start') +
            record(r, step, 'progress', 'progress', `, "loss": ${loss}, "toks_per_s": ${toks}`) +
            record(r, step, 'step_end', 'end'),
        );
      }
      out += `step ${String(step).padStart(4, '0')} | loss ${loss.toFixed(4)} | lr 2.00e-04 | toks/s ${toks}\n`;
      lines++;
    }
    while (lines < Math.floor(elapsed * LINES_PER_S)) {
      lines++;
      out += `[debug] step ${step}: rank ${lines % RANKS} input shape torch.Size([1, 512]), seq_len 512\n`;
    }
    if (out) process.stdout.write(out);
  }, 50);
}
