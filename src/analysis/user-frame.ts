import type { Frame } from '../ingest/events.js';

const LIBRARY = /site-packages|dist-packages|\/lib\/python\d|^<frozen|^<string>|\/torch\//;

/** The innermost frame in the user's code (not site-packages, the stdlib or torch), else the innermost. */
export function userFrame(frames: Frame[]): Frame | null {
  for (let i = frames.length - 1; i >= 0; i--) if (!LIBRARY.test(frames[i]!.file)) return frames[i]!;
  return frames[frames.length - 1] ?? null;
}
