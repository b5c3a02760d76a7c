/**
 * The format of a rank's stack log, `nsa-dbg-stacks_rank{R}_pid{P}.log`, written by nsa-dbg's stack hook
 * (src/stacks/sitecustomize.py) and by nsa-dbg itself:
 *
 *   # nsa-dbg stacks {"rank": 3, "rank_var": "RANK", "local_rank": 1, "pid": 4242, "signal": 12, …}
 *   # request 1795300000.123 1795300001.402       ← nsa-dbg, just before it signals the process
 *   Current thread 0x00007f… (most recent call first):   ← faulthandler, from C, at once
 *     File "train.py", line 40 in train_step
 *   …
 *   # seen 1795300000.124                         ← the hook's watcher thread, once the process runs
 *   # in-python 1795300000.125                    ← the hook's Python handler, once Python runs again
 *   # request 1795300002.500 1795300002.501 sample ← a straggler sample (src/session/straggler-sampling.ts)
 *   # samples 23                                  ← after `# marks seen`: samples go by SIGURG …
 *   # request 1795300003.100 1795300003.101 sample
 *   Thread 0x00007f… (most recent call first):     ← … the watcher writes the main thread's frames
 *     File "train.py", line 52 in all_reduce
 *   # sampled 1795300003.102                      ← … and this mark, in one write: the sample is whole
 *
 * Each request's dump is the text after its `# request` line: a DumpEvent named `<path>@<id>`, with
 * the request's time and whether the main thread ran Python right after (within IN_PYTHON_S of
 * the watcher's `# seen`, where the hook writes it: `# marks seen` after the header says so). The
 * id is when nsa-dbg decided to ask; the second number, when the box sent the signal (its own
 * clock, as the in-python time is): over a slow ssh link seconds can lie between the two, and only
 * the second says how soon Python ran. Older logs (and a `date` without %N) have only the id.
 * `rank_var` null: the process had no rank in its environment and the hook guessed 0 (the evidence
 * places it by its pid's heartbeats: src/analysis/worker-ranks.ts).
 * A request marked `sample` is a straggler sample: read once, when whole (its in-python mark, the
 * next request or the end), and handed on as a StackSampleEvent to be counted, not kept as a dump:
 * many thousands of them come in a long run.
 */

/** a Python handler that answers this soon after the request ran with the main thread in Python */
export const IN_PYTHON_S = 1;
/**
 * A hook that marks `# seen` is waited for this long after the signal went out before a dump with
 * neither mark is taken for a main thread outside Python. The watcher needs a core and the GIL:
 * on a loaded box it comes seconds late, and a main thread that holds the GIL in native code keeps
 * it from ever coming (that rank is judged after this long, not after IN_PYTHON_S)
 */
export const SEEN_WAIT_S = 5;
/** a dump's text kept at most (the rest of a runaway one is dropped) */
export const MAX_SEGMENT_CHARS = 1 << 20;

export const HEADER = /^# nsa-dbg stacks (.*)$/;
export const REQUEST = /^# request (\d+(?:\.\d+)?)(?:\s+(\S+))?(?:\s+(sample))?\s*$/;
/** the mark of a straggler sample's request */
export const SAMPLE_MARK = 'sample';
export const NUMBER = /^\d+(?:\.\d+)?$/;
/**
 * the hook's marks after a dump: the main thread ran Python, the watcher thread saw the signal;
 * after a sample by the sample signal: the watcher wrote it (the sample is whole)
 */
export const MARK = /^# (in-python|seen|sampled) (\d+(?:\.\d+)?)\s*$/;
export const MARKS_SEEN = /^# marks seen\s*$/;
/** the hook's watcher writes samples on this signal (`off`: the trainer took the signal over) */
export const SAMPLES = /^# samples (\d+|off)\s*$/;

/** the id nsa-dbg gives a request (its time, trainer clock) and the dump's name in the evidence */
export function stackRequestId(ts: number): string {
  return ts.toFixed(3);
}
export function stackDumpName(logPath: string, id: string): string {
  return `${logPath}@${id}`;
}
