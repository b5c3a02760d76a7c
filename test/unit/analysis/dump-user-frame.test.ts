import { describe, expect, it } from 'vitest';
import { Evidence } from '../../../src/analysis/evidence.js';
import { parseStackDump } from '../../../src/ingest/stackdump.js';

// The shape a real CUDA process gives when SIGUSR1 lands inside torch.cuda.synchronize():
// the innermost frame is torch's, the frame to look at is the caller in the user's code.
const DUMP = `Signal 10 at 2026-11-22T04:01:43.026000Z

--- Thread: MainThread (140000000000000) ---
  File "/work/test/device/cuda_trainer.py", line 82, in <module>
    out = _forward_prefill_batched(a) if batched else _forward_prefill_sequential(a, step)
  File "/work/test/device/cuda_trainer.py", line 70, in _forward_prefill_sequential
    torch.cuda.synchronize()
  File "/opt/torch/.venv/lib/python3.12/site-packages/torch/cuda/__init__.py", line 1161, in synchronize
    with torch.cuda.device(device):
  File "/work/test/device/cuda_trainer.py", line 44, in dump_stack
    f.write("".join(traceback.format_stack(stack)))
`;

describe('dump frames', () => {
  it('names the innermost frame and the innermost frame in the user’s code', () => {
    const d = parseStackDump(DUMP, 'stackdump_1795320103.txt')!;
    const ev = new Evidence();
    ev.addEvent(d);
    const [dump] = ev.result({ exitCode: 130 }).dumps;
    expect(dump!.mainThreadTop).toMatchObject({ function: 'synchronize', line: 1161 });
    expect(dump!.mainThreadUserTop).toMatchObject({ function: '_forward_prefill_sequential', line: 70 });
  });
});
