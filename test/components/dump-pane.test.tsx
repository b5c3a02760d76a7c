import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { DumpPane, NO_DUMP_TEXT } from '../../panels/DumpPane.js';
import type { DumpView } from '../../src/session/state.js';
import { frameLines } from '../helpers/render.js';
import { DUMP } from './sample-state.js';

const pane = (dump: DumpView | null, width = 100, height = 14) =>
  frameLines(render(<DumpPane dump={dump} width={width} height={height} color={false} />).lastFrame());

describe('DumpPane', () => {
  it('asks for a dump when there is none', () => {
    expect(pane(null)[0]).toBe(NO_DUMP_TEXT);
    expect(NO_DUMP_TEXT).toContain('d dumps');
    expect(NO_DUMP_TEXT.length).toBeLessThan(40); // fits a half-width pane at 80 columns
  });

  it('shows kind, signal and file, then the main thread innermost first with short paths', () => {
    const lines = pane(DUMP);
    expect(lines[0]).toBe('stack dump · signal SIGUSR1 · stackdump_1795315501.txt');
    expect(lines[2]).toMatch(/^grouped_selection_attention_packed +nsa\/core\/attention_kernels\.py:298$/);
    expect(lines[3]).toMatch(/^_forward_prefill_batched +nsa\/core\/nsa_attention\.py:1269$/);
    expect(lines.join('\n')).toContain('nn/modules/module.py:1790');
    expect(lines.join('\n')).not.toContain('/root/');
  });

  it("lists the other threads' top frames", () => {
    const text = pane(DUMP).join('\n');
    expect(text).toContain('other threads');
    expect(text).toContain('Thread-1: wait lib/python3.12/threading.py:359');
    expect(text).toContain('Thread-2 (_watchdog): _watchdog nsa-vibe/scripts/train_showcase.py:1100');
  });

  it('shortens paths to their last two parts in a narrow pane', () => {
    const text = pane(DUMP, 66).join('\n');
    expect(text).toContain('grouped_selection_attention_packed core/attention_kernels.py:298');
    expect(text).toContain('Thread-1: wait python3.12/threading.py:359');
  });

  it('keeps the innermost function whole and shortens its location first when space is short', () => {
    const text = pane(DUMP, 50).join('\n');
    expect(text).toContain('grouped_selection_attention_packed attention_kern…');
  });

  it('keeps the innermost frames and says how many outer ones are hidden when short of room', () => {
    const lines = pane(DUMP, 80, 6);
    expect(lines).toHaveLength(6);
    expect(lines[1]).toContain('+6 outer frames');
    expect(lines[2]).toContain('grouped_selection_attention_packed');
  });
});
