/**
 * The bench reads the app's screens off what the frame writer sends (only the cells that changed),
 * in chunks cut anywhere, escapes included: the text it sees must be the frame's.
 */
import { describe, expect, it } from 'vitest';
import { ScreenText } from '../../../bench/screen-text.js';
import { FrameWriter } from '../../../panels/frame-writer.js';

const plain = (frame: string, rows: number) =>
  Array.from({ length: rows }, (_, i) =>
    (frame.split('\n')[i] ?? '').replace(/\x1b\[[0-9;]*m/g, '').trimEnd(),
  ).join('\n');

describe("the bench's screen text", () => {
  it('is the frame, from changed cells only, however the output is cut', () => {
    const frames = [
      'nsa-dbg notebook · 0 cells\nno cells yet: n starts one from a lane',
      'nsa-dbg notebook · 1 cell\n\x1b[1mc1\x1b[22m  RUN  batched-prefill · step 3\nfilter: batched_',
      'nsa-dbg local · lane batched-prefill · running · 4s\nkeys · Esc or ? closes\nlog · 7,546 lines',
      'nsa-dbg local · lane batched-prefill · running · 5s\n\x1b[2mloss 5.75\x1b[22m\nlog · 7,612 lines',
    ];
    for (const cut of [1, 2, 3, 5, 7, 64]) {
      const screen = new ScreenText(60, 6);
      let sent = '';
      const w = new FrameWriter({ write: (s: string) => (sent += s), columns: 60, rows: 6 });
      for (const f of frames) {
        w.frame(f);
        // every escape may be split between two chunks
        for (let i = 0; i < sent.length; i += cut) screen.write(sent.slice(i, i + cut));
        sent = '';
        expect(screen.text(), `chunks of ${cut}`).toBe(plain(f, 6));
      }
    }
  });
});
