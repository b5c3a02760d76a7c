/**
 * The dump pane shows the newest dump. A trainer's own SIGUSR1 dump is timed by the whole second
 * (nsa-vibe's stackdump_<second>.txt); the stack hook's dump answering the same request (or a check's
 * sample a moment before it) is timed to the ms within that second, and must not hide it.
 */
import { describe, expect, it } from 'vitest';
import { DigestCollector } from '../../../src/analysis/run-digest.js';
import type { DumpEvent } from '../../../src/ingest/events.js';

const frame = { file: 'train.py', line: 1, function: 'step' };
const dump = (file: string, dumpKind: DumpEvent['dumpKind'], ts: number, signal?: number): DumpEvent => ({
  kind: 'dump',
  file,
  dumpKind,
  ts,
  ...(signal ? { signal } : {}),
  threads: [{ name: 'MainThread', frames: [frame] }],
});

describe('the newest dump', () => {
  it("the trainer's whole-second dump counts as the end of its second", () => {
    const d = new DigestCollector();
    d.dump('nsa-dbg-stacks_rank0_pid7.log@1795731250.093', dump('hook', 'faulthandler', 1795731250.093));
    d.dump('stackdump_1795731250.txt', dump('trainer', 'signal', 1795731250, 10));
    expect(d.newestDumpName).toBe('stackdump_1795731250.txt');
    // in the other order of arrival too
    const e = new DigestCollector();
    e.dump('stackdump_1795731250.txt', dump('trainer', 'signal', 1795731250, 10));
    e.dump('nsa-dbg-stacks_rank0_pid7.log@1795731250.093', dump('hook', 'faulthandler', 1795731250.093));
    expect(e.newestDumpName).toBe('stackdump_1795731250.txt');
  });

  it('a dump of a later second is newer, whoever wrote it', () => {
    const d = new DigestCollector();
    d.dump('stackdump_1795731250.txt', dump('trainer', 'signal', 1795731250, 10));
    d.dump('nsa-dbg-stacks_rank0_pid7.log@1795731251.002', dump('hook', 'faulthandler', 1795731251.002));
    expect(d.newestDumpName).toBe('nsa-dbg-stacks_rank0_pid7.log@1795731251.002');
  });
});
