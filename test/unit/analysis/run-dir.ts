/** Builds small synthetic run folders in a temp dir for verdict tests. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Beat {
  step: number;
  ts: number;
  msg: string;
  phase?: string;
  loss?: number | string;
  toks?: number;
}

export function hbLine(rank: number, b: Beat, pid = 4242): string {
  let s = `{"ts": ${b.ts}, "iso": "x", "pid": ${pid}, "rank": ${rank}, "step": ${b.step}, "msg": "${b.msg}", "gpu_mem_alloc": 92, "gpu_mem_reserved": 400`;
  if (b.phase !== undefined) s += `, "phase": "${b.phase}"`;
  if (b.loss !== undefined) s += `, "loss": ${b.loss}, "toks_per_s": ${b.toks ?? 80}`;
  return `${s}}`;
}

/** A healthy rank: boot, then `steps` steps of `dt` s each (beat, progress, step_end). */
export function healthyBeats(steps: number, dt = 2, t0 = 1000, opts: { progress?: boolean } = {}): Beat[] {
  const out: Beat[] = [{ step: 0, ts: t0, msg: 'boot', phase: 'start' }];
  let t = t0;
  for (let s = 1; s <= steps; s++) {
    out.push({ step: s, ts: t + 0.001, msg: 'beat', phase: 'step_start' });
    t += dt;
    if (opts.progress !== false) {
      out.push({ step: s, ts: t, msg: 'progress', loss: 5.5, toks: 80 });
      out.push({ step: s, ts: t + 0.001, msg: 'step_end', phase: 'end' });
    }
    t += 0.002;
  }
  return out;
}

export function stepLines(steps: number, from = 1): string {
  let s = '';
  for (let i = from; i <= steps; i++)
    s += `step ${String(i).padStart(4, '0')} | loss 5.5000 | lr 1.00e-04 | toks/s 80\n`;
  return s;
}

export function makeRun(files: Record<string, string | Beat[] | Record<number, Beat[]>>): string {
  const dir = mkdtempSync(join(tmpdir(), 'nsa-dbg-run-'));
  for (const [name, content] of Object.entries(files)) {
    if (name === 'heartbeats') {
      for (const [rank, beats] of Object.entries(content as Record<number, Beat[]>)) {
        writeFileSync(
          join(dir, `heartbeat_rank${rank}.jsonl`),
          `${beats.map((b) => hbLine(Number(rank), b)).join('\n')}\n`,
        );
      }
    } else writeFileSync(join(dir, name), content as string);
  }
  return dir;
}
