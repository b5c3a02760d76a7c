import { describe, expect, it } from 'vitest';
import { hotFramesOf } from '../../../src/analysis/silences.js';
import { parseStackDump } from '../../../src/ingest/stackdump.js';

/** a SIGUSR1 dump in nsa-vibe's format: library frames on top of the user's, the handler innermost */
function dump(i: number, fn: string, line: number) {
  const text = [
    `Signal 10 at 2026-11-22T16:34:${String(10 + i).padStart(2, '0')}.000000Z`,
    '',
    '--- Thread: MainThread (140432274981184) ---',
    '  File "/tmp/nv/scripts/train_showcase.py", line 1247, in main',
    '    logits = model(x)',
    '  File "/tmp/nv/nsa/core/nsa_attention.py", line 544, in forward',
    '    return self._forward_prefill_batched(x, kv)',
    `  File "/tmp/nv/nsa/core/selection.py", line ${line}, in ${fn}`,
    '    out = kernel(q, k, v)',
    '  File "/opt/venv/lib/python3.12/site-packages/torch/nn/functional.py", line 5000, in scaled_dot_product_attention',
    '    return torch._C._nn.sdpa(q, k, v)',
    '  File "/tmp/nv/scripts/train_showcase.py", line 218, in dump_stack',
    '    faulthandler.dump_traceback(f)',
    '',
  ].join('\n');
  const d = parseStackDump(text, `stackdump_17953652${String(i).padStart(2, '0')}.txt`);
  if (!d) throw new Error('fixture dump did not parse');
  return d;
}

describe('hot frames', () => {
  it('one row per function of the innermost user frame, its lines (hottest first) as the detail', () => {
    // as on the H100: one kernel's samples spread over four of its lines, another function once
    const dumps = [
      dump(0, 'grouped_selection_attention_packed', 120),
      dump(1, 'grouped_selection_attention_packed', 131),
      dump(2, 'grouped_selection_attention_packed', 140),
      dump(3, 'grouped_selection_attention_packed', 131),
      dump(4, 'grouped_selection_attention_packed', 152),
      dump(5, 'select_topn_ranges', 88),
    ];
    const rows = hotFramesOf(dumps);
    expect(rows.map((r) => [r.function, r.count])).toEqual([
      ['grouped_selection_attention_packed', 5],
      ['select_topn_ranges', 1],
    ]);
    expect(rows[0]!.file).toBe('/tmp/nv/nsa/core/selection.py');
    expect(rows[0]!.line).toBe(131);
    expect(rows[0]!.lines).toEqual([
      { line: 131, count: 2 },
      { line: 120, count: 1 },
      { line: 140, count: 1 },
      { line: 152, count: 1 },
    ]);
  });
});
