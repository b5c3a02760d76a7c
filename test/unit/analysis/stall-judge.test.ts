import { describe, expect, it } from 'vitest';
import { DEFAULT_JUDGE, judgeSilence, type SilenceInput } from '../../../src/analysis/stall-judge.js';
import type { DumpRequestEvent, Frame, ProcProbeEvent, ProcState } from '../../../src/ingest/events.js';

const SPIN: Frame = { file: 'nsa/core/nsa_attention.py', line: 205, function: '_forward_prefill_batched' };
const OTHER: Frame = { file: 'nsa/core/attention_kernels.py', line: 90, function: 'select_topn_ranges' };
const proc = (ts: number, state: ProcState, cpuPct: number | null, wchan = ''): ProcProbeEvent => ({
  kind: 'proc',
  ts,
  rank: 0,
  pid: 42,
  state,
  cpuPct,
  wchan,
});
const req = (ts: number, outcome: DumpRequestEvent['outcome']): DumpRequestEvent => ({
  kind: 'dump-request',
  ts,
  rank: 0,
  pid: 42,
  outcome,
  purpose: 'suspect',
});
const base = (over: Partial<SilenceInput>): SilenceInput => ({
  sinceTs: 100,
  nowS: 110,
  thresholdS: 5,
  procs: [],
  dumps: [],
  requests: [],
  ...over,
});

describe('judgeSilence: stuck or slow', () => {
  it('is only checking while nothing was taken yet', () => {
    const j = judgeSilence(base({}));
    expect(j).toMatchObject({ state: 'checking', hang: false });
  });

  it('calls a process stopped (state T) stuck once it stayed stopped for the confirm window', () => {
    const settings = { ...DEFAULT_JUDGE, spinConfirmS: 20 };
    const stopped = [100, 110, 121].map((ts) => proc(ts, 'T', 0));
    const j = judgeSilence(base({ nowS: 121, procs: stopped }), settings);
    expect(j).toMatchObject({ state: 'stuck', hang: true, evidence: { procState: 'T' } });
    expect(j.why).toContain('stopped (state T) for 21 s');
  });

  it('keeps checking while a stop is younger than the window, or was interrupted by running', () => {
    const settings = { ...DEFAULT_JUDGE, spinConfirmS: 20 };
    const young = judgeSilence(base({ nowS: 110, procs: [proc(106, 'T', 0), proc(110, 'T', 0)] }), settings);
    expect(young).toMatchObject({ state: 'checking', hang: false });
    expect(young.why).toBe('process stopped (state T) for 4 s of 20 s');
    // stopped, resumed (SIGCONT), stopped again: the window counts from the second stop
    const resumed = [proc(100, 'T', 0), proc(112, 'R', 90), proc(115, 'T', 0), proc(125, 'T', 0)];
    const again = judgeSilence(base({ nowS: 125, procs: resumed }), settings);
    expect(again).toMatchObject({ state: 'checking', hang: false });
    expect(again.why).toContain('for 10 s of 20 s');
  });

  it('a silence still unjudged past maxStepS is a hang (nothing waits forever), never before', () => {
    const settings = { ...DEFAULT_JUDGE, maxStepS: 60 };
    const running = [proc(106, 'R', 40)];
    const before = judgeSilence(base({ nowS: 150, procs: running }), settings);
    expect(before).toMatchObject({ state: 'checking', hang: false });
    const after = judgeSilence(base({ nowS: 161, procs: running }), settings);
    expect(after).toMatchObject({ state: 'stuck', hang: true });
    expect(after.why).toBe('silent for 61 s > maxStepS 60 s (0 sample(s), CPU 40%)');
  });

  it('calls moving frames busy, never a hang', () => {
    const j = judgeSilence(
      base({
        procs: [proc(106, 'R', 99)],
        dumps: [
          { ts: 106, top: SPIN },
          { ts: 107.5, top: OTHER },
        ],
      }),
    );
    expect(j).toMatchObject({ state: 'busy', hang: false, evidence: { framesMoved: true, samples: 2 } });
  });

  it('calls a sleeping rank with three identical samples stuck, and not with two', () => {
    const dumps = [106, 107.5, 109].map((ts) => ({ ts, top: OTHER }));
    const procs = [proc(106, 'S', 0.5, 'futex_wait_queue'), proc(109, 'S', 0, 'futex_wait_queue')];
    expect(judgeSilence(base({ procs, dumps: dumps.slice(0, 2) }))).toMatchObject({ hang: false });
    const j = judgeSilence(base({ procs, dumps }));
    expect(j).toMatchObject({
      state: 'stuck',
      hang: true,
      evidence: { wchan: 'futex_wait_queue', samples: 3 },
    });
    expect(j.frame).toEqual(OTHER);
  });

  it('a reading taken while the rank answered our own request is no fact about it (a confirmed hang stays one)', () => {
    // as recorded once at a confirmation: the decision's /proc reading landed 56 ms after the
    // culprit's Python handler was signalled, and found it running that handler
    const answered = (ts: number, outcome: DumpRequestEvent['outcome'], answeredTs: number) => ({
      ...req(ts, outcome),
      file: `dump@${ts}`,
      answeredTs,
    });
    const requests = [
      answered(106, 'faulthandler', 106.01),
      answered(107.5, 'written', 107.6),
      answered(109, 'faulthandler', 109.01),
      answered(109.3, 'written', 109.35),
    ];
    const dumps = [106, 107.5, 109, 109.3].map((ts) => ({ ts, top: OTHER }));
    const quiet = [proc(106, 'S', 0, 'hrtimer_nanosleep'), proc(109, 'S', 0.6, 'hrtimer_nanosleep')];
    const disturbed = [...quiet, proc(109.36, 'R', 3.4)];
    const j = judgeSilence(base({ procs: disturbed, dumps, requests }));
    expect(j).toMatchObject({ state: 'stuck', hang: true, evidence: { procState: 'S', cpuPct: 0.6 } });
    // the same reading half a second after the answer is the rank's own: running, not asleep
    const own = [...quiet, proc(109.9, 'R', 3.4)];
    expect(judgeSilence(base({ procs: own, dumps, requests }))).toMatchObject({ hang: false });
    // an unanswered request leaves the rank to itself: a reading after it counts
    const unanswered = [...requests.slice(0, 3), req(109.3, 'none-within-5s')];
    const late = [...quiet, proc(109.36, 'R', 3.4)];
    expect(judgeSilence(base({ procs: late, dumps: dumps.slice(0, 3), requests: unanswered }))).toMatchObject(
      {
        hang: false,
      },
    );
  });

  it('needs max(2 × threshold, 30 s) of one frame and line while spinning', () => {
    const procs = [proc(140, 'R', 100)];
    const short = judgeSilence(
      base({ nowS: 140, procs, dumps: [106, 120, 135].map((ts) => ({ ts, top: SPIN })) }),
    );
    expect(short).toMatchObject({ state: 'checking', hang: false });
    const long = judgeSilence(
      base({ nowS: 140, procs, dumps: [106, 120, 136].map((ts) => ({ ts, top: SPIN })) }),
    );
    expect(long).toMatchObject({ state: 'stuck', hang: true });
    // a long threshold stretches the window: 2 × 20 s
    const wide = judgeSilence(
      base({ nowS: 150, thresholdS: 20, procs, dumps: [106, 120, 140].map((ts) => ({ ts, top: SPIN })) }),
    );
    expect(wide.hang).toBe(false);
    expect(DEFAULT_JUDGE.spinConfirmS).toBe(30);
  });

  it('counts a runnable process as busy even when a shared box gives it little CPU', () => {
    const j = judgeSilence(
      base({ nowS: 140, procs: [proc(140, 'R', 30)], dumps: [106, 137].map((ts) => ({ ts, top: SPIN })) }),
    );
    expect(j).toMatchObject({ state: 'stuck', hang: true, evidence: { cpuPct: 30 } });
  });

  it('treats a CPU-busy native call (no dump within 5 s) as busy until maxStepS', () => {
    const input = base({
      procs: [proc(106, 'R', 100), proc(112, 'R', 100)],
      requests: [req(106, 'none-within-5s')],
    });
    expect(judgeSilence({ ...input, nowS: 120 })).toMatchObject({ state: 'busy', hang: false });
    const ceiling = judgeSilence({ ...input, nowS: 100 + 1801 });
    expect(ceiling).toMatchObject({ state: 'blocked-native', hang: true });
  });

  it('calls an idle process that cannot answer a dump blocked-native, a hang', () => {
    const j = judgeSilence(
      base({
        procs: [
          proc(106, 'S', 0, 'pipe_read'),
          proc(108, 'S', 0, 'pipe_read'),
          proc(112, 'S', 0, 'pipe_read'),
        ],
        requests: [req(106, 'none-within-5s')],
      }),
    );
    expect(j).toMatchObject({ state: 'blocked-native', hang: true, evidence: { wchan: 'pipe_read' } });
  });

  it('forgets the unanswered request once a dump arrives after it', () => {
    const j = judgeSilence(
      base({
        procs: [proc(106, 'R', 100)],
        requests: [req(106, 'none-within-5s')],
        dumps: [
          { ts: 112, top: SPIN },
          { ts: 113.5, top: OTHER },
        ],
      }),
    );
    expect(j.state).toBe('busy');
  });

  it('calls a late answer to an unanswered request busy: the real first step sat in backward', () => {
    // nsa-vibe on an H100, sequential prefill: step 1 took 58 s; suspect at 30 s (lane firstStepS 30),
    // SIGUSR1 unanswered for 5 s (the main thread in loss.backward()), the dump written when it returned
    const BACKWARD: Frame = { file: 'scripts/train_showcase.py', line: 1300, function: 'main' };
    const j = judgeSilence(
      base({
        sinceTs: 960,
        nowS: 1018.4,
        thresholdS: 30,
        procs: [proc(990.8, 'R', 99.6), proc(996.4, 'R', 100.2), proc(1001.5, 'R', 99.8)],
        requests: [req(991.3, 'none-within-5s')],
        dumps: [{ ts: 1018, top: BACKWARD }],
      }),
    );
    expect(j).toMatchObject({ state: 'busy', hang: false });
    expect(j.why).toMatch(/outside Python for 27 s/);
  });

  it('a late answer after the stack hook saw the main thread in native code names where it sat', () => {
    // the hook's dump from C at once (no in-python mark: a native op), the trainer back in Python
    // 10 s later: the description is the same whichever request lands after the op returned
    const MODULE: Frame = { file: 'train.py', line: 305, function: '<module>' };
    const j = judgeSilence(
      base({
        sinceTs: 100,
        nowS: 120,
        thresholdS: 3,
        procs: [proc(104, 'R', 100), proc(106, 'R', 100)],
        requests: [req(104.2, 'none-within-5s'), req(114.5, 'faulthandler')],
        dumps: [
          { ts: 104.2, top: MODULE, inPython: false },
          { ts: 114.5, top: OTHER, inPython: true },
        ],
      }),
    );
    expect(j).toMatchObject({ state: 'busy', hang: false });
    expect(j.why).toMatch(
      /main thread in native code, in <module> \(train\.py:305\), for 10 s \(a native op\)/,
    );
  });

  it('ignores samples taken before the silence began', () => {
    const j = judgeSilence(
      base({
        procs: [proc(90, 'T', 0), proc(106, 'R', 100)],
        dumps: [
          { ts: 95, top: OTHER },
          { ts: 106, top: SPIN },
        ],
      }),
    );
    expect(j).toMatchObject({ state: 'checking', evidence: { framesMoved: false, samples: 1 } });
  });
});
