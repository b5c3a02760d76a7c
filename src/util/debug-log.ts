import { appendFileSync } from 'node:fs';

/**
 * Engine diagnostics for a UI that owns the terminal: with NSA_DBG_LOG=FILE set, timestamped lines
 * are appended there (nothing is ever printed around the Ink frame). Off by default.
 */
const file = process.env.NSA_DBG_LOG;

/** whether the engine log is on: a line that costs work to compose is composed only then */
export const debugLogOn = (): boolean => Boolean(file);

export function debugLog(msg: string): void {
  if (!file) return;
  try {
    appendFileSync(file, `${new Date().toISOString()} ${msg}\n`);
  } catch {
    // a diagnostics file that cannot be written must not break the run
  }
}
