/**
 * The `[tag]` lines of nsa-vibe and its kin (`[boot] …`, `[warn] …`, `[GRAD-TRACE] …`): which log tag
 * each is, and the step the debug and grad-trace ones announce; and the few untagged lines that
 * still get a tag.
 */

const TAG = /^\[([A-Za-z][\w-]*)\]/;
const DEBUG_STEP = /^\[debug\] step (\d+):/;
const GRAD_TRACE = /^\[GRAD-TRACE\] \S*?(\d*) arrived=\d+ missing=\d+/;
const MISSING_GRAD = /^\s*(?:- )?MISSING: \S+$/;
const TORCHRUN_FAILED = /failed \(exitcode: (-?\d+)\) local_rank: (\d+)/;

/**
 * `[tag]` → LogLineEvent tag (written as each log tag's `[tag]`s). A Map, not an object: a trainer's
 * `[constructor]` or `[toString]` line must not find Object.prototype's members.
 */
const TAGS = new Map<string, string>(
  Object.entries({
    boot: ['boot', 'env-guard', 'env-policy', 'override', 'amp', 'opt'],
    train: ['train', 'fwe'],
    debug: ['debug'],
    warn: ['warn', 'watch'],
    error: ['error'],
    'grad-trace': ['GRAD-TRACE'],
    ddp: ['DDP', 'ddp', 'ddp-safe'],
    trace: ['trace'],
  }).flatMap(([tag, names]) => names.map((name) => [name, tag])),
);

/** the line's `[tag]` when it is one we know (the caller checked that it starts with `[`) */
export function knownTag(line: string): string | undefined {
  const name = TAG.exec(line)?.[1];
  return name !== undefined && TAGS.has(name) ? name : undefined;
}

/** A known tag's line → its log tag and announced step; `'malformed'`: a grad-trace line cut short. */
export function readTagged(line: string, name: string): { tag: string; step?: number } | 'malformed' {
  let tag = TAGS.get(name) ?? 'other';
  if (name === 'train' && line.startsWith('[train][FATAL]')) tag = 'fatal';
  else if (tag === 'debug') {
    const d = DEBUG_STEP.exec(line);
    if (d !== null) return { tag, step: Number(d[1]) };
  } else if (tag === 'grad-trace') {
    const g = GRAD_TRACE.exec(line);
    if (g === null) return 'malformed';
    if (g[1] !== '') return { tag, step: Number(g[1]) };
  }
  return { tag };
}

/**
 * A line with no `[tag]` that still is one of ours (`c`: its first character code): a capture
 * script's `== …`, a grad-trace's `MISSING:` continuation, torchrun's `failed (exitcode: …)
 * local_rank: N` (the agent's local rank); null for plain text.
 */
export function untaggedLine(
  line: string,
  c: number,
  lastTag: string | null,
): { tag: string; localRank?: number } | null {
  if (line.startsWith('== ')) return { tag: 'capture' };
  if (lastTag === 'grad-trace' && MISSING_GRAD.test(line)) return { tag: 'grad-trace' };
  if (c === 69 /* E */ || c === 87 /* W */) {
    const m = TORCHRUN_FAILED.exec(line);
    if (m !== null) return { tag: 'torchrun', localRank: Number(m[2]) };
  }
  return null;
}
