/**
 * A stall that recovered is remembered as the hang the checks found. Seen on CI: the demo was
 * SIGSTOPped, shown as HANG (state T) for seconds, then SIGCONTed; the /proc reading taken just
 * after the SIGCONT was stamped before the rank's next record, and the stall, judged at the
 * resumption alone, read as a running process: the banner went back to "no stall seen".
 */
import { describe, expect, it } from 'vitest';
import { Evidence } from '../../../src/analysis/evidence.js';
import { RunFolderReader } from '../../../src/ingest/run-folder.js';
import { hbLine } from './run-dir.js';

const T0 = 1795787200;

function pastStall(lastReading: 'T' | 'S') {
  const ev = new Evidence({ detector: { floorS: 3 } });
  ev.expectProbes();
  const reader = new RunFolderReader(ev, { timed: true });
  const steps = (from: number, to: number, t: number) =>
    Array.from({ length: to - from + 1 }, (_, i) => from + i).flatMap((k) => [
      { step: k, ts: t + (k - from) * 0.2, msg: 'beat', phase: 'step_start' },
      { step: k, ts: t + (k - from) * 0.2 + 0.19, msg: 'progress', loss: 1 / k, toks: 100 },
    ]);
  // steps 1–5, then step 6 begins and the process is stopped for 40 s; it resumes at T0 + 41
  const beats = [
    ...steps(1, 5, T0),
    { step: 6, ts: T0 + 1, msg: 'beat', phase: 'step_start' },
    ...steps(6, 8, T0 + 41).slice(1),
  ];
  reader.push('heartbeat_rank0.jsonl', Buffer.from(beats.map((b) => `${hbLine(0, b, 100)}\n`).join('')));
  const probes = [];
  for (let t = T0 + 5; t < T0 + 40; t += 2.5)
    probes.push({ kind: 'proc', ts: t, rank: 0, pid: 100, state: 'T', cpuPct: 0, wchan: 'do_signal_stop' });
  // the reading right after SIGCONT, stamped just before the rank's next record
  probes.push({ kind: 'proc', ts: T0 + 40.9, rank: 0, pid: 100, state: lastReading, cpuPct: 0, wchan: 'x' });
  reader.push('nsa-dbg-probes.jsonl', Buffer.from(probes.map((p) => `${JSON.stringify(p)}\n`).join('')));
  return ev.pastStalls();
}

describe('a stall that recovered', () => {
  it('stopped for 40 s (state T), read as running just before its next record: still the hang it was', () => {
    for (const last of ['T', 'S'] as const) {
      const past = pastStall(last);
      expect(past).toHaveLength(1);
      expect([past[0]!.step, past[0]!.state, past[0]!.evidence?.procState], last).toEqual([6, 'stuck', 'T']);
    }
  });
});
