/**
 * Python tracebacks as they appear in merged stdout/stderr, one builder per rank (under torchrun the
 * ranks' lines interleave, each with its own `[rankN]:` prefix). A traceback ends after its exception
 * line and message; the message may span lines (CUDA errors add two hint lines; torchrun's
 * ChildFailedError carries its whole failure table), so it runs until a blank line or a line that is
 * clearly something else. The event is emitted then (or on flush), never before.
 */
import type { Frame, TracebackEvent } from './events.js';

const FRAME = /^\s*File "(.*)", line (\d+), in (.*)$/;
const EXCEPTION = /^([A-Za-z_][\w.]*)(?::\s?(.*))?$/;
const CARETS = /^\s*[~^]+\s*$/;
/** `_PyObject_Dump`: `object address  : 0x…`, `object type name: KeyboardInterrupt`, `object repr     : …` */
const OBJECT_DUMP = /^object (address|refcount|type|type name|repr)\s*: (.*)$/;
const MAX_MESSAGE_LINES = 60;
const MAX_FRAMES = 500;
export const ROOT_CAUSE_HEADER = 'Root Cause (first observed failure):';

/** Lines that never belong to an exception message: the trainer's own output and logger lines. */
const NOT_MESSAGE =
  /^(?:\[[A-Za-z][\w-]*\]|step \d|Traceback \(most recent call last\)|== |[EWI]\d{4} \d\d:)/;
const CHAIN = /^(?:During handling of the above exception|The above exception was the direct cause)/;

export type FeedResult = 'more' | 'done' | 'done-reprocess';

export class TracebackBuilder {
  private readonly frames: Frame[] = [];
  private exception = '';
  private readonly message: string[] = [];
  private inMessage: boolean;
  private sawRootCause = false;
  private blankSeen = false;

  /** `summaryOnly`: torchrun's failure table seen without a traceback before it */
  constructor(
    readonly rank: number | undefined,
    summaryOnly = false,
  ) {
    this.inMessage = summaryOnly;
    if (summaryOnly) {
      this.exception = 'ChildFailedError';
      this.message.push(ROOT_CAUSE_HEADER);
      this.sawRootCause = true;
    }
  }

  feed(line: string): FeedResult {
    return this.inMessage ? this.feedMessage(line) : this.feedFrames(line);
  }

  private feedFrames(line: string): FeedResult {
    const f = line.trimStart().startsWith('File "') ? FRAME.exec(line) : null;
    if (f !== null) {
      if (this.frames.length < MAX_FRAMES)
        this.frames.push({ file: f[1]!, line: Number(f[2]), function: f[3]! });
      return 'more';
    }
    if (line.startsWith('  ')) {
      const last = this.frames[this.frames.length - 1];
      if (last !== undefined && last.code === undefined && !CARETS.test(line)) last.code = line.trim();
      return 'more';
    }
    // Python could not print the exception (stderr already closed at shutdown, as when torchrun
    // stops its workers): it dumps the exception object instead, `object type name: X` among them
    const dumped = OBJECT_DUMP.exec(line);
    if (dumped !== null) {
      if (dumped[1] === 'type name') this.exception ||= dumped[2]!.trim();
      else if (dumped[1] === 'repr' && this.message.length === 0) this.message.push(dumped[2]!.trim());
      return 'more';
    }
    if (line === 'lost sys.stderr') return 'done';
    // an interrupt landing while Python prints a frame leaves one blank line before the exception
    // line (`Exception ignored in atexit callback` … `KeyboardInterrupt: `)
    if (line.trim() === '' && this.frames.length > 0 && !this.blankSeen) {
      this.blankSeen = true;
      return 'more';
    }
    const ex = EXCEPTION.exec(line);
    if (ex === null) return 'done-reprocess';
    this.exception = ex[1]!;
    if (ex[2] !== undefined && ex[2].length > 0) this.message.push(ex[2]);
    this.inMessage = true;
    return 'more';
  }

  private feedMessage(line: string): FeedResult {
    if (line.trim() === '' || CHAIN.test(line)) return 'done';
    if (NOT_MESSAGE.test(line) || this.message.length >= MAX_MESSAGE_LINES) return 'done-reprocess';
    this.message.push(line);
    if (line === ROOT_CAUSE_HEADER) this.sawRootCause = true;
    else if (this.sawRootCause && /^=+$/.test(line)) {
      // the table closes with a row of '=' after the root cause: nothing more belongs to it
      return 'done';
    }
    return 'more';
  }

  finish(): TracebackEvent {
    const ev: TracebackEvent = {
      kind: 'traceback',
      rank: this.rank,
      exception: this.exception || 'UnknownError',
      message: this.message.join('\n').trim(),
      frames: this.frames,
    };
    if (!this.exception && !this.sawRootCause) ev.cutOff = true;
    if (this.exception.endsWith('ChildFailedError') || this.sawRootCause) {
      ev.torchrun = parseFailureTable(this.message);
      ev.exception = 'ChildFailedError';
      const rc = ev.torchrun.rootCauseRank;
      const summary = this.message.find((l) => /FAILED\s*$/.test(l))?.trim();
      ev.message = [
        summary,
        rc === null ? undefined : `root cause: rank ${rc}, exitcode ${ev.torchrun.rootCauseExitCode}`,
      ]
        .filter((s) => s !== undefined)
        .join('; ');
    }
    return ev;
  }
}

/** torchrun's table: `[k]:` blocks with `rank : N (local_rank: M)` and `exitcode : N (pid: P)`. */
function parseFailureTable(lines: string[]): NonNullable<TracebackEvent['torchrun']> {
  const failures: Array<{ rank: number; exitCode: number | null }> = [];
  let rootCauseRank: number | null = null;
  let rootCauseExitCode: number | null = null;
  let inRoot = false;
  let rank: number | null = null;
  let exitCode: number | null = null;
  const close = () => {
    if (rank === null) return;
    if (inRoot && rootCauseRank === null) {
      rootCauseRank = rank;
      rootCauseExitCode = exitCode;
    } else if (!inRoot) failures.push({ rank, exitCode });
    rank = null;
    exitCode = null;
  };
  for (const raw of lines) {
    const line = raw.trim();
    if (/^\[\d+\]:$/.test(line)) close();
    else if (line === ROOT_CAUSE_HEADER) {
      close();
      inRoot = true;
    } else {
      const r = /^rank\s*:\s*(\d+)/.exec(line);
      if (r) rank = Number(r[1]);
      const e = /^exitcode\s*:\s*(-?\d+)/.exec(line);
      if (e) exitCode = Number(e[1]);
    }
  }
  close();
  if (rootCauseRank !== null) failures.unshift({ rank: rootCauseRank, exitCode: rootCauseExitCode });
  return { rootCauseRank, rootCauseExitCode, failures };
}
