/**
 * Test rendering helpers. ink-testing-library fixes the width at 100 columns and has no rows, so
 * `renderAt` renders through a fake stdout of any size (and can resize it), in Ink's debug mode
 * where every render writes one whole frame. `waitFor` polls a condition across macrotasks: Ink
 * delivers a key one macrotask after `stdin.write`, and React 19 flushes via setImmediate.
 */
import { EventEmitter } from 'node:events';
import { render as inkRender } from 'ink';
import type { ReactElement } from 'react';

const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

export function stripAnsi(s: string): string {
  return s.replace(ANSI, '');
}

/** The frame's lines, colours removed. */
export function frameLines(frame: string | undefined): string[] {
  return stripAnsi(frame ?? '').split('\n');
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Resolve once `condition` holds, checking after each macrotask; fail with `describe()` after
 * `maxTicks` checks instead of hanging the test.
 */
export async function waitFor(
  condition: () => boolean,
  describe: () => string = () => 'condition',
  maxTicks = 500,
): Promise<void> {
  for (let i = 0; i < maxTicks; i++) {
    if (condition()) return;
    await tick();
  }
  if (!condition()) throw new Error(`waitFor timed out: ${describe()}`);
}

/** Let pending renders settle: a few macrotasks, for asserting that something did NOT happen. */
export async function settle(ticks = 5): Promise<void> {
  for (let i = 0; i < ticks; i++) await tick();
}

class FakeStdout extends EventEmitter {
  frames: string[] = [];
  isTTY = true;
  constructor(
    public columns: number,
    public rows: number,
  ) {
    super();
  }
  write = (frame: string) => {
    this.frames.push(frame);
    return true;
  };
  resize(columns: number, rows: number) {
    this.columns = columns;
    this.rows = rows;
    this.emit('resize');
  }
}

class FakeStdin extends EventEmitter {
  isTTY = true;
  private data: string | null = null;
  write = (data: string) => {
    this.data = data;
    this.emit('readable');
    this.emit('data', data);
  };
  read = () => {
    const d = this.data;
    this.data = null;
    return d;
  };
  setEncoding() {}
  setRawMode() {}
  resume() {}
  pause() {}
  ref() {}
  unref() {}
}

export interface SizedRender {
  lastFrame(): string;
  /** lastFrame without colours, split into lines */
  lines(): string[];
  stdin: { write(data: string): void };
  resize(columns: number, rows: number): void;
  unmount(): void;
}

/** Render `tree` into a terminal of `columns` × `rows`. */
export function renderAt(tree: ReactElement, columns: number, rows: number): SizedRender {
  const stdout = new FakeStdout(columns, rows);
  const stdin = new FakeStdin();
  const stderr = new FakeStdout(columns, rows);
  const instance = inkRender(tree, {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stderr: stderr as unknown as NodeJS.WriteStream,
    stdin: stdin as unknown as NodeJS.ReadStream,
    debug: true,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  const lastFrame = () => stdout.frames[stdout.frames.length - 1] ?? '';
  return {
    lastFrame,
    lines: () => frameLines(lastFrame()),
    stdin,
    resize: (c, r) => stdout.resize(c, r),
    unmount: () => instance.unmount(),
  };
}

/** Raw key sequences as a terminal sends them. */
export const KEYS = {
  up: '\u001b[A',
  down: '\u001b[B',
  pageUp: '\u001b[5~',
  pageDown: '\u001b[6~',
  enter: '\r',
  escape: '\u001b',
  backspace: '\u007f',
} as const;
