/**
 * Stack dump files → DumpEvent. Four formats: nsa-vibe's signal dump (`Signal 10 at …Z`) and watchdog
 * dump (`Watchdog at …Z; last_heartbeat=…`), both with `--- Thread: NAME (IDENT) ---` blocks in
 * traceback order; Python faulthandler (`Thread 0x… (most recent call first):`) and `py-spy dump`
 * (`Thread 123 (active): "MainThread"`), both innermost first. Frames are always stored outermost
 * first, like a traceback.
 */
import type { DumpEvent, DumpThread, Frame } from './events.js';

const SIGNAL_HEADER = /^Signal (\d+) at (\S+?)Z?(?:\s|$)/;
const WATCHDOG_HEADER = /^Watchdog at (\S+?)Z?;\s*(?:last_heartbeat=(-?[\d.]+(?:e[+-]?\d+)?)|FSDP backend)?/;
const NSA_THREAD = /^--- Thread: (.*) \(([^()]*)\) ---$/;
const NSA_FRAME = /^\s*File "(.*)", line (\d+), in (.*)$/;
const SECTION = /^--- (.+) \(watchdog\) ---$/;
const FH_THREAD = /^(Current thread|Thread) (0x[0-9a-fA-F]+)(?: \[([^\]]*)\])? \(most recent call first\):$/;
const FH_FRAME = /^\s*File "(.*)", line (\d+) in (.*)$/;
const PYSPY_THREAD = /^Thread (0x[0-9a-fA-F]+|\d+) \(([^)]*)\)(?:: "(.*)")?$/;
const PYSPY_FRAME = /^ {4}(\S.*?) \((.*):(\d+)\)$/;

function isoToEpoch(iso: string): number | undefined {
  const t = Date.parse(/[zZ]$|[+-]\d\d:?\d\d$/.test(iso) ? iso : `${iso}Z`);
  return Number.isFinite(t) ? t / 1000 : undefined;
}

/** `stackdump_1795315501.txt` → 1795315501 (epoch seconds in the name), when plausible. */
function epochFromName(file: string): number | undefined {
  const m = /(\d{9,11})(?:\.\d+)?\.txt$/.exec(file);
  return m ? Number(m[1]) : undefined;
}

function parseNsa(lines: string[], ev: DumpEvent): void {
  let thread: DumpThread | null = null;
  let section: string | null = null;
  for (const line of lines.slice(1)) {
    const t = NSA_THREAD.exec(line);
    if (t !== null) {
      thread = { name: t[1]!, ident: t[2], frames: [] };
      ev.threads.push(thread);
      section = null;
      continue;
    }
    const s = SECTION.exec(line);
    if (s !== null) {
      thread = null;
      section = s[1]!;
      continue;
    }
    if (section === 'GRAD TRACE') {
      const m = /^\s*(?:- )?MISSING: (\S+)/.exec(line);
      if (m !== null) {
        ev.missingGrads ??= [];
        ev.missingGrads.push(m[1]!);
      }
      continue;
    }
    if (thread === null) continue;
    const f = NSA_FRAME.exec(line);
    if (f !== null) thread.frames.push({ file: f[1]!, line: Number(f[2]), function: f[3]! });
    else if (line.startsWith('    ') && line.trim() !== '') {
      const last = thread.frames[thread.frames.length - 1];
      if (last !== undefined && last.code === undefined) last.code = line.trim();
    }
  }
}

function parseFaulthandler(lines: string[], ev: DumpEvent): void {
  let thread: DumpThread | null = null;
  for (const line of lines) {
    const t = FH_THREAD.exec(line);
    if (t !== null) {
      const current = t[1] === 'Current thread';
      thread = { name: t[3] ?? (current ? 'current' : `Thread ${t[2]}`), ident: t[2], frames: [] };
      ev.threads.push(thread);
      continue;
    }
    const f = thread === null ? null : FH_FRAME.exec(line);
    if (f !== null) thread!.frames.push({ file: f[1]!, line: Number(f[2]), function: f[3]! });
    else if (line.trim() === '') thread = null;
  }
  for (const th of ev.threads) {
    th.frames.reverse();
    // faulthandler names no threads; the one that runs the script's top level is the main thread
    if (th.frames[0]?.function === '<module>' && !ev.threads.some((o) => o.name === 'MainThread')) {
      th.name = 'MainThread';
    }
  }
}

function parsePySpy(lines: string[], ev: DumpEvent): void {
  let thread: DumpThread | null = null;
  for (const line of lines) {
    const t = PYSPY_THREAD.exec(line);
    if (t !== null) {
      thread = { name: t[3] ?? `Thread ${t[1]}`, ident: t[1], frames: [] };
      ev.threads.push(thread);
      continue;
    }
    if (thread === null) continue;
    const f = PYSPY_FRAME.exec(line);
    if (f !== null) thread.frames.push({ file: f[2]!, line: Number(f[3]), function: f[1]! });
  }
  for (const th of ev.threads) th.frames.reverse();
}

/** A dump file's text → DumpEvent, or null when it is none of the known formats (or has no threads). */
export function parseStackDump(text: string, file: string): DumpEvent | null {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const first = lines.find((l) => l.trim() !== '') ?? '';
  const ev: DumpEvent = { kind: 'dump', file, dumpKind: 'signal', threads: [] };
  const sig = SIGNAL_HEADER.exec(first);
  const wd = sig === null ? WATCHDOG_HEADER.exec(first) : null;
  if (sig !== null) {
    ev.signal = Number(sig[1]);
    ev.ts = isoToEpoch(sig[2]!);
  } else if (wd !== null) {
    ev.dumpKind = 'watchdog';
    ev.ts = isoToEpoch(wd[1]!);
    if (wd[2] !== undefined) ev.lastHeartbeatTs = Number(wd[2]);
  }
  if (sig !== null || wd !== null) parseNsa(lines.slice(lines.indexOf(first)), ev);
  else if (lines.some((l) => FH_THREAD.test(l))) {
    ev.dumpKind = 'faulthandler';
    const fatal = lines.find((l) => l.startsWith('Fatal Python error:'));
    const signame = /Segmentation fault|Aborted|Floating point exception|Bus error/.exec(fatal ?? '');
    if (signame !== null) {
      ev.signal = { 'Segmentation fault': 11, Aborted: 6, 'Floating point exception': 8, 'Bus error': 7 }[
        signame[0] as 'Aborted'
      ];
    }
    parseFaulthandler(lines, ev);
  } else if (lines.some((l) => PYSPY_THREAD.test(l))) {
    ev.dumpKind = 'py-spy';
    parsePySpy(lines, ev);
  } else return null;
  ev.ts ??= epochFromName(file);
  return ev.threads.length > 0 ? ev : null;
}

/** Common names of helpers a dump handler calls (matched only next to the handler itself). */
const HANDLER_FUNCTIONS =
  /^(?:dump_stack|_dump(?:_\w+)?|dump_stacks?|_?(?:signal_)?handler|_on_signal|_handle_signal|_write_threads)$/;
/** A frame that takes the stack: it runs inside the handler, never in the interrupted program. */
const CAPTURE_CALL = /_current_frames|format_stack|print_stack|extract_stack|dump_traceback|format_list/;
const STDLIB_STACK_FILE = /(?:^|\/)(?:traceback|faulthandler)\.py$/;

/** The main thread (by name, else the first thread). */
export function mainThread(d: DumpEvent): DumpThread | undefined {
  return d.threads.find((t) => t.name === 'MainThread') ?? d.threads[0];
}

/** does this source line call `fn` (by name: `fn(`, `.fn(`)? */
function calls(code: string | undefined, fn: string): boolean {
  if (code === undefined || !/^[A-Za-z_]\w*$/.test(fn)) return false;
  return new RegExp(`(?:^|[^\\w])${fn}\\s*\\(`).test(code);
}

/**
 * How many of the main thread's innermost frames belong to the signal handler that wrote the dump
 * (0 for dumps written from outside the process: faulthandler, py-spy). A Python signal handler
 * runs on top of the interrupted frame, so a signal dump's innermost frames are the handler and
 * whatever it called to take the stack. They are recognised by what they do (a frame that calls a
 * stack-capture function, stdlib stack code, a common helper name) and then by the calls between
 * them: a frame whose line calls the next handler frame by name (`write_stacks(f)` in `_on_usr1`) is
 * the handler's too, while the interrupted frame's line calls something else. When nothing is
 * recognised, the innermost frame is the handler.
 */
export function handlerFrameCount(d: DumpEvent): number {
  const frames = mainThread(d)?.frames ?? [];
  if (d.dumpKind !== 'signal' || frames.length === 0) return 0;
  const strong = (f: Frame) => CAPTURE_CALL.test(f.code ?? '') || HANDLER_FUNCTIONS.test(f.function);
  let i = frames.length - 1;
  while (i >= 0 && (strong(frames[i]!) || STDLIB_STACK_FILE.test(frames[i]!.file))) i--;
  if (i === frames.length - 1)
    i--; // nothing recognised: the innermost frame is the handler
  // a handler's callers are the handler's too as long as each calls the next by name; a chain that
  // starts at stdlib stack code (traceback, threading) is the program's own waiting
  else if (i >= 0 && strong(frames[i + 1]!))
    while (i >= 0 && calls(frames[i]!.code, frames[i + 1]!.function)) i--;
  return frames.length - 1 - i;
}

/**
 * The innermost frame of the main thread where the program was: below the signal handler that
 * wrote the dump, if one did (handlerFrameCount). Undefined when the handler is all there is (run
 * from native code with no Python frame below).
 */
export function mainThreadTop(d: DumpEvent): Frame | undefined {
  const frames = mainThread(d)?.frames ?? [];
  return frames[frames.length - 1 - handlerFrameCount(d)];
}
