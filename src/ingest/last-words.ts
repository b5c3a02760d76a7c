/**
 * Last words in a rank's stack log (src/stacks/sitecustomize.py writes them; docs/last-words.md):
 *
 *   # last-words {"signal": "SIGTERM", "signum": 15, "t": 1795703176.851, "pid": 2957, "by": "watcher"}
 *   Current thread 0x… (most recent call first):     ← the hook's watcher thread: left out
 *   …
 *   Thread 0x… (most recent call first):             ← the main thread, blocked in all_reduce
 *     File ".../distributed_c10d.py", line 1541 in all_reduce
 *   # last-words-end
 *
 * and, on a fatal signal, faulthandler's own text from C (no time, no end marker: the process is
 * gone after it):
 *
 *   Fatal Python error: Segmentation fault
 *
 *   Current thread 0x… (most recent call first):
 */
import type { DumpThread, Frame } from './events.js';
import { parseStackDump } from './stackdump.js';

export const LAST_WORDS_HEADER = /^# last-words (\{.*\})\s*$/;
export const LAST_WORDS_END = /^# last-words-end\s*$/;
/** faulthandler's first line on a fatal signal, with the names it gives them */
export const FATAL_HEADER =
  /^Fatal Python error: (Segmentation fault|Aborted|Bus error|Floating point exception|Illegal instruction)\s*$/;

const FATAL_SIGNALS: Record<string, string> = {
  'Segmentation fault': 'SIGSEGV',
  Aborted: 'SIGABRT',
  'Bus error': 'SIGBUS',
  'Floating point exception': 'SIGFPE',
  'Illegal instruction': 'SIGILL',
};

/** faulthandler's name of a fatal signal → `SIGSEGV`, … */
export function fatalSignalName(faulthandlerName: string): string {
  return FATAL_SIGNALS[faulthandlerName] ?? faulthandlerName;
}

/** the hook's own file (copied into each run dir as `…/sitecustomize.py`) */
const HOOK_FILE = /(?:^|\/)sitecustomize\.py$/;
/** the hook's functions that run on top of the interrupted main thread, and its watcher's */
const HOOK_HANDLER = new Set(['handler', 'covered', 'record', 'write']);

const isHookFrame = (f: Frame, names: Set<string>) => HOOK_FILE.test(f.file) && names.has(f.function);

/** the hook's watcher thread (it waits for the signals that end a process): no thread of the program */
export function isHookThread(t: DumpThread): boolean {
  return t.frames.some((f) => isHookFrame(f, WATCHER));
}
const WATCHER = new Set(['watch']);

/**
 * A record's text → its threads: the hook's watcher thread left out (it is the one writing), and
 * the hook's handler frames cut off the main thread's top (the handler ran on top of where the
 * program was), so the innermost frame left is the program's. `main`: the main thread's ident from
 * the log's header.
 */
export function lastWordsThreads(text: string, main: string | null): DumpThread[] {
  const d = parseStackDump(text, 'last-words');
  if (d === null) return [];
  return d.threads
    .filter((t) => !isHookThread(t))
    .map((t) => {
      const cut = t.frames.findIndex((f) => isHookFrame(f, HOOK_HANDLER));
      const frames = cut < 0 ? t.frames : t.frames.slice(0, cut);
      const isMain = main !== null && t.ident?.toLowerCase() === main;
      return { ...t, name: isMain ? 'MainThread' : t.name, frames };
    });
}
