/**
 * The stdout Ink is given: it looks like the terminal (size, TTY, 'resize') but takes Ink's frames
 * and hands them to a FrameWriter, which sends only what changed to the real terminal. Ink runs in
 * its debug mode for this: it then writes each whole frame as plain text, with no cursor movement
 * of its own to undo. Keyboard-protocol queries Ink may send pass straight through.
 */
import { EventEmitter } from 'node:events';
import { FrameWriter } from './frame-writer.js';

/** terminal protocol writes that are not frames (kitty keyboard query, enable, disable) */
const PASS_THROUGH = /^\x1b\[[<>?][0-9;]*u$/;

export class FrameStdout extends EventEmitter {
  readonly writer: FrameWriter;
  readonly isTTY = true;
  private readonly onResize = () => this.emit('resize');

  constructor(
    private readonly real: NodeJS.WriteStream,
    minIntervalMs: number,
  ) {
    super();
    this.writer = new FrameWriter(real, minIntervalMs);
    real.on('resize', this.onResize);
  }

  get columns(): number {
    return this.real.columns;
  }

  get rows(): number {
    return this.real.rows;
  }

  get writable(): boolean {
    return true;
  }

  write(
    data: string | Uint8Array,
    encodingOrCb?: BufferEncoding | ((err?: Error | null) => void),
    cb?: (err?: Error | null) => void,
  ): boolean {
    const done = typeof encodingOrCb === 'function' ? encodingOrCb : cb;
    const text = typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
    if (PASS_THROUGH.test(text)) this.real.write(text);
    else if (text !== '') this.writer.frame(text);
    done?.();
    return true;
  }

  /** the whole screen again, as the newest frame has it */
  repaint(): void {
    this.writer.repaint();
  }

  /** the last frame out now, and no more 'resize' from the real terminal */
  dispose(): void {
    this.writer.dispose();
    this.real.off('resize', this.onResize);
  }
}
