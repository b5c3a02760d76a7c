/**
 * A stack dump as a person reads it: the main thread's frames innermost first, from the frame the
 * signal interrupted (the handler left out), the user's own innermost frame marked, the other
 * threads' tops. The digest keeps the newest one; the dashboard's dump pane draws it.
 */
import type { DumpEvent, Frame } from '../ingest/events.js';
import { mainThread, mainThreadTop } from '../ingest/stackdump.js';
import { userFrame } from './user-frame.js';

export interface DumpView {
  file: string;
  kind: 'signal' | 'watchdog' | 'faulthandler' | 'py-spy';
  signal?: number;
  /** the main thread's frames, innermost first, from where the program was (the handler left out) */
  mainThread: Frame[];
  /** index in mainThread of the innermost frame in the user's code (not site-packages/torch) */
  userFrame?: number;
  otherThreads: { name: string; top?: Frame }[];
}

/** the view of a dump: main-thread frames innermost first, from the interrupted frame */
export function toDumpView(d: DumpEvent): DumpView {
  const main = mainThread(d);
  const top = mainThreadTop(d);
  let frames = main ? [...main.frames].reverse() : [];
  if (top) {
    const i = frames.indexOf(top);
    if (i > 0) frames = frames.slice(i);
  }
  const user = userFrame([...frames].reverse());
  const userIdx = user ? frames.indexOf(user) : -1;
  return {
    file: d.file,
    kind: d.dumpKind,
    ...(d.signal === undefined ? {} : { signal: d.signal }),
    mainThread: frames,
    ...(userIdx > 0 ? { userFrame: userIdx } : {}),
    otherThreads: d.threads
      .filter((t) => t !== main)
      .map((t) => ({ name: t.name, top: t.frames[t.frames.length - 1] })),
  };
}
