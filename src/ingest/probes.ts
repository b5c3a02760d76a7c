/**
 * `nsa-dbg-probes.jsonl`: what nsa-dbg itself observed about the trainer's processes while a rank
 * was silent (process state, CPU, wchan) and every stack-dump request with its outcome. The live
 * session appends to it in the run dir and reads it back through the same follower as every other
 * evidence file, so a live verdict and `nsa-dbg analyze` of the folder read identical facts.
 */
import { parseJsonObject } from '../util/json-object.js';
import type { DumpOutcome, ProbeEvent } from './events.js';
import { finite, parseOomKill, parseTeardown, procStateOf } from './teardown-probes.js';

export const PROBES_FILE = 'nsa-dbg-probes.jsonl';

const OUTCOMES = new Set<DumpOutcome>(['faulthandler', 'written', 'none-within-5s', 'no-handler', 'py-spy']);
const PURPOSES = new Set(['suspect', 'hot-frames', 'user']);

/** One line → a probe event, or null when it is not one (counted as skipped by the caller). */
export function parseProbeLine(line: string): ProbeEvent | null {
  const o = parseJsonObject(line);
  if (o === null) return null;
  if (o.kind === 'teardown') return parseTeardown(o);
  if (o.kind === 'oom-kill') return parseOomKill(o);
  if (!finite(o.ts) || !finite(o.rank) || !finite(o.pid)) return null;
  if (o.kind === 'proc') {
    const ev: ProbeEvent = {
      kind: 'proc',
      ts: o.ts,
      rank: o.rank,
      pid: o.pid,
      state: procStateOf(o.state),
      cpuPct: finite(o.cpuPct) ? o.cpuPct : null,
    };
    if (typeof o.wchan === 'string') ev.wchan = o.wchan;
    return ev;
  }
  if (o.kind === 'dump-request') {
    if (typeof o.outcome !== 'string' || !OUTCOMES.has(o.outcome as DumpOutcome)) return null;
    const purpose = typeof o.purpose === 'string' && PURPOSES.has(o.purpose) ? o.purpose : 'user';
    const ev: ProbeEvent = {
      kind: 'dump-request',
      ts: o.ts,
      rank: o.rank,
      pid: o.pid,
      outcome: o.outcome as DumpOutcome,
      purpose: purpose as 'suspect',
    };
    if (typeof o.file === 'string') ev.file = o.file;
    if (typeof o.after === 'string') ev.after = o.after;
    if (finite(o.answeredTs)) ev.answeredTs = o.answeredTs;
    return ev;
  }
  return null;
}

/** The line written for an event (the inverse of parseProbeLine). */
export function probeLine(e: ProbeEvent): string {
  const { kind, ...rest } = e;
  return `${JSON.stringify({ kind, ...rest })}\n`;
}
