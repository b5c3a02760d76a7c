/**
 * The trainer's own dump, asked for after the stack hook's dump said the main thread was in Python,
 * may not come within 5 s on a loaded box. Seen at 512 demo ranks on 2 cores: the culprit, asleep in
 * Python, was confirmed hung as "no dump within 5 s: main thread outside Python" on that follow-up
 * alone, 13 s after its hook dump had said it was in Python. The follow-up says nothing of where the
 * main thread is when it goes unanswered.
 */
import { describe, expect, it } from 'vitest';
import { Evidence } from '../../../src/analysis/evidence.js';
import { parseProbeLine, probeLine } from '../../../src/ingest/probes.js';
import { RunFolderReader } from '../../../src/ingest/run-folder.js';
import { hbLine } from './run-dir.js';

const T0 = 1795787200;
const LOG = 'nsa-dbg-stacks_rank0_pid100.log';

function evidence(followUp: boolean) {
  const ev = new Evidence({ detector: { floorS: 3 } });
  ev.expectProbes();
  const reader = new RunFolderReader(ev, { timed: true });
  // five steps of 0.2 s, then step 6 begins and nothing more comes
  const beats = [1, 2, 3, 4, 5]
    .flatMap((k) => [
      { step: k, ts: T0 + (k - 1) * 0.2, msg: 'beat', phase: 'step_start' },
      { step: k, ts: T0 + k * 0.2 - 0.01, msg: 'progress', loss: 1 / k, toks: 100 },
    ])
    .concat([{ step: 6, ts: T0 + 1, msg: 'beat', phase: 'step_start' }])
    .map((b) => `${hbLine(0, b, 100)}\n`);
  reader.push('heartbeat_rank0.jsonl', Buffer.from(beats.join('')));
  const head = {
    rank: 0,
    rank_var: 'RANK',
    local_rank: 0,
    pid: 100,
    host: 'vm',
    signal: 12,
    main: '0x01',
    t: T0,
  };
  const id = (T0 + 20).toFixed(3);
  reader.push(
    LOG,
    Buffer.from(
      [
        `# nsa-dbg stacks ${JSON.stringify(head)}`,
        '# marks seen',
        `# request ${id} ${T0 + 24}`,
        'Current thread 0x01 (most recent call first):',
        '  File "train.py", line 183 in backward',
        '  File "train.py", line 200 in main',
        `# in-python ${T0 + 24.1}`,
        `# seen ${T0 + 24.1}`,
        '',
      ].join('\n'),
    ),
  );
  const probes = [
    { kind: 'proc', ts: T0 + 19, rank: 0, pid: 100, state: 'S', cpuPct: 0, wchan: 'hrtimer_nanosleep' },
    {
      kind: 'dump-request',
      ts: T0 + 20,
      rank: 0,
      pid: 100,
      outcome: 'faulthandler',
      purpose: 'suspect',
      file: `${LOG}@${id}`,
    },
    ...(followUp
      ? [
          {
            kind: 'dump-request',
            ts: T0 + 33,
            rank: 0,
            pid: 100,
            outcome: 'none-within-5s',
            purpose: 'suspect',
            after: `${LOG}@${id}`,
          },
        ]
      : []),
    { kind: 'proc', ts: T0 + 38, rank: 0, pid: 100, state: 'S', cpuPct: 0, wchan: 'hrtimer_nanosleep' },
    { kind: 'proc', ts: T0 + 40, rank: 0, pid: 100, state: 'S', cpuPct: 0, wchan: 'hrtimer_nanosleep' },
  ];
  reader.push('nsa-dbg-probes.jsonl', Buffer.from(probes.map((p) => `${JSON.stringify(p)}\n`).join('')));
  return ev.silences(T0 + 41)[0]!.judgement!;
}

describe('a follow-up request for the trainer’s own dump', () => {
  it('unanswered, after a hook dump in Python: no evidence of native code, the judgement is the same as without it', () => {
    const without = evidence(false);
    const withIt = evidence(true);
    expect(without.why).not.toMatch(/outside Python|native/);
    expect([withIt.state, withIt.hang, withIt.why]).toEqual([without.state, without.hang, without.why]);
  });

  it('its record keeps the hook dump it followed (written and read back as the probe file holds it)', () => {
    const rec = {
      kind: 'dump-request' as const,
      ts: T0,
      rank: 0,
      pid: 100,
      outcome: 'none-within-5s' as const,
      purpose: 'suspect' as const,
      after: `${LOG}@1`,
    };
    expect(parseProbeLine(probeLine(rec).trim())).toEqual(rec);
  });
});
