/**
 * Facts read from the evidence when a verdict is made, not when a file arrives: what the latest
 * content of each small file implies, what each dump implies, and the step each traceback and
 * FATAL line belongs to (its own stream's context joined with what the other streams say in the
 * end). This is what keeps the verdict independent of the order in which files were read.
 */
import type { DumpEvent } from '../ingest/events.js';
import { OUTPUT_HELD_FILE } from '../ingest/launcher-files.js';
import { type At, compareAt, streamName } from '../ingest/order.js';
import { mainThreadTop } from '../ingest/stackdump.js';
import { parseJsonObject } from '../util/json-object.js';
import { baseName, type EvidenceState, type SignatureState, type StepContext } from './evidence-state.js';
import type { AnalysisResult, DumpReport } from './result.js';
import { matchOutput, matchSource } from './signatures.js';
import { rankOfDump, whereIn } from './silences.js';

const MEM_JSON = /^mem_.*\.json$/;
type Context = { rank: StepContext | null; rank0: StepContext | null };

/** the step a rank was in at a point of the output: that point's context and the other streams' final state */
export function stepAt(s: EvidenceState, rank: number, ctx: Context): number {
  const others = (r: number): StepContext | null => {
    let announced = -1;
    let done = -1;
    for (const [source, byRank] of s.progress) {
      const c = source === 'output' ? undefined : byRank.get(r);
      if (c === undefined) continue;
      announced = Math.max(announced, c.announced);
      done = Math.max(done, c.done);
    }
    return announced < 0 ? null : { announced, done };
  };
  const at = (r: number, own: StepContext | null): number | null => {
    const o = others(r);
    if (own === null && o === null) return null;
    return Math.max(own?.announced ?? 0, o?.announced ?? 0, Math.max(own?.done ?? 0, o?.done ?? 0) + 1);
  };
  // ranks other than 0 print no step lines: use what rank 0 says
  return at(rank, ctx.rank) ?? at(0, ctx.rank0) ?? 1;
}

/** each traceback's step, resolved once per verdict */
export function resolveTracebackSteps(s: EvidenceState): void {
  for (const t of s.tracebacks) t.step = stepAt(s, t.ev.rank ?? t.ev.torchrun?.rootCauseRank ?? 0, t.ctx);
}

/** the first non-finite loss: the lowest step, then the canonical order */
export function firstNan(s: EvidenceState): { rank: number; step: number } | null {
  const resolved = s.nanHits.map((h) => ({
    rank: h.rank,
    step: h.step ?? stepAt(s, h.rank, h.ctx ?? { rank: null, rank0: null }),
    at: h.at,
  }));
  resolved.sort((a, b) => a.step - b.step || compareAt(a.at, b.at));
  const hit = resolved[0];
  return hit === undefined ? null : { rank: hit.rank, step: hit.step };
}

/** dumps by path (their arrival order differs between live and offline) */
export function dumpsInOrder(s: EvidenceState): DumpEvent[] {
  return [...s.dumps.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, d]) => d);
}

/** count a signature's hit; keep the first in the canonical order, whichever stream was read first */
export function addHit(hits: Map<string, SignatureState>, h: Omit<SignatureState, 'count'>): void {
  const cur = hits.get(h.sig.name);
  if (cur === undefined) hits.set(h.sig.name, { ...h, count: 1 });
  else {
    cur.count++;
    if (compareAt(h.at, cur.at) < 0) Object.assign(cur, { rank: h.rank, text: h.text, at: h.at });
  }
}

/** every signature: those matched in streams, and those the files and dumps imply now */
export function allSignatures(s: EvidenceState): SignatureState[] {
  const out = new Map<string, SignatureState>();
  for (const [name, h] of s.signatures) out.set(name, { ...h });
  for (const [path, content] of [...s.files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const base = baseName(path);
    const at: At = { stream: streamName('file', path), seq: 0 };
    if (base === '.anomaly_type' || base === '.HALT') {
      for (const sig of matchSource(base === '.HALT' ? 'halt' : 'anomaly', content))
        addHit(out, { sig, rank: 0, text: content.trim().slice(0, 500), at });
    } else if (MEM_JSON.test(base)) {
      const ooms = parseJsonObject(content)?.num_ooms;
      const sig = matchOutput('CUDA out of memory')[0];
      if (typeof ooms === 'number' && ooms > 0 && sig !== undefined)
        addHit(out, { sig, rank: 0, text: `${base}: num_ooms=${ooms}`, at });
    }
  }
  for (const d of dumpsInOrder(s))
    for (const sig of matchSource('dump', d.dumpKind))
      addHit(out, { sig, rank: undefined, text: d.file, at: { stream: streamName('dump', d.file), seq: 0 } });
  return [...out.values()].sort((a, b) => compareAt(a.at, b.at));
}

/** gradients that never arrived: from grad-trace lines, and from watchdog dumps that list them */
export function missingGradsOf(s: EvidenceState): EvidenceState['missingGrads'] {
  const out = [...s.missingGrads];
  for (const d of dumpsInOrder(s))
    if (d.missingGrads !== undefined && d.missingGrads.length > 0)
      out.push({ rank: 0, missing: d.missingGrads.length });
  return out;
}

const HOLDS = ' still holds the output';

/** a note of outputHolderNotes (the dashboard shows them when the run ends) */
export const isOutputHolderNote = (note: string) => note.endsWith(HOLDS);

/** longest command line a note quotes: enough to tell `python -c …` from a data-loader worker */
const HOLDER_COMMAND_CHARS = 60;

/**
 * The processes of the run that still had stdout.log open when the trainer ended (a helper it
 * started, a forked worker), as the launcher named them in output_held: one note each. The run
 * ended with the trainer; these are why its output may still grow.
 */
export function outputHolderNotes(s: EvidenceState): string[] {
  const text = s.files.get(OUTPUT_HELD_FILE) ?? '';
  const notes: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\d+) (.*)$/.exec(line.trim());
    if (m === null) continue;
    // the program's name, not its path: `python3 -c …` says more in a short line than /opt/…/bin/
    const cmd = m[2]!.trim().replace(/^\S*\//, '');
    const shown = cmd.length > HOLDER_COMMAND_CHARS ? `${cmd.slice(0, HOLDER_COMMAND_CHARS - 1)}…` : cmd;
    notes.push(`pid ${m[1]}${shown ? ` (\`${shown}\`)` : ''}${HOLDS}`);
  }
  return notes;
}

/** the end-of-run marker: final metrics printed, or a metrics file written */
export function metricsSeen(s: EvidenceState): boolean {
  if (s.outputMetrics !== null) return true;
  for (const [path, content] of s.files)
    if (/^metrics(?:_fsdp)?\.json$/.test(baseName(path)) && parseJsonObject(content) !== null) return true;
  return false;
}

/** peak GPU memory: the heartbeats' and the mem_*.json snapshots' */
export function memoryOf(s: EvidenceState): AnalysisResult['memory'] {
  // heartbeats carry MiB (memory_reserved()//2**20); mem_*.json carry bytes: same floor division
  const reserved: number[] = s.hbPeakReservedMiB === null ? [] : [s.hbPeakReservedMiB];
  const alloc: number[] = s.hbPeakAllocMiB === null ? [] : [s.hbPeakAllocMiB];
  for (const [path, content] of s.files) {
    if (!MEM_JSON.test(baseName(path))) continue;
    const m = parseJsonObject(content);
    const r = m?.['reserved_bytes.all.peak'];
    const a = m?.['allocated_bytes.all.peak'];
    if (typeof r === 'number') reserved.push(Math.floor(r / 2 ** 20));
    if (typeof a === 'number') alloc.push(Math.floor(a / 2 ** 20));
  }
  if (reserved.length === 0) return null;
  const out: NonNullable<AnalysisResult['memory']> = { peakReservedMiB: Math.max(...reserved) };
  if (alloc.length > 0) out.peakAllocMiB = Math.max(...alloc);
  return out;
}

/** the verdict's dumps, by path: where each main thread was, and which rank wrote it where known */
export function dumpsOf(s: EvidenceState): DumpReport[] {
  return dumpsInOrder(s).map((d) => {
    const r: DumpReport = {
      file: d.file,
      kind: d.dumpKind,
      mainThreadTop: mainThreadTop(d) ?? null,
      mainThreadUserTop: whereIn(d),
    };
    if (d.signal !== undefined) r.signal = d.signal;
    if (d.ts !== undefined) r.ts = d.ts;
    const rank = rankOfDump(s, d.file);
    if (rank !== undefined) r.rank = rank;
    return r;
  });
}

/** the furthest step any rank completed */
export function completedSteps(s: EvidenceState): number {
  let max = 0;
  // a rank that only writes step_start beats: starting step k means k−1 is done
  for (const steps of s.steps.values()) max = Math.max(max, steps.completed());
  return max;
}
