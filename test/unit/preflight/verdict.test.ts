import { describe, expect, it } from 'vitest';
import type { ProbeOutput } from '../../../src/preflight/types.js';
import { judgeBox } from '../../../src/preflight/verdict.js';
import { ask, probe } from './fixtures.js';

const two = ask({
  lane: 'preflight-two',
  ranksPerNode: 2,
  ranksSource: 'lane preflight-two: launcher.torchrun.nproc_per_node 2',
});
const statusOf = (p: ProbeOutput, a = ask()) => {
  const r = judgeBox(p, a);
  return {
    go: r.go,
    bad: Object.fromEntries(
      r.checks
        .filter((c) => c.status === 'fail' || c.status === 'warn')
        .map((c) => [`${c.id}${c.gpu === undefined ? '' : `#${c.gpu}`}`, c.status]),
    ),
  };
};
const edit = (p: ProbeOutput, f: (q: ProbeOutput) => void) => {
  const q = structuredClone(p);
  f(q);
  return q;
};

describe('real H100 boxes (test/device/preflight.sh)', () => {
  it('a healthy 1-GPU box is GO with nothing to say', () => {
    const r = judgeBox(probe('h100x1', 'healthy'), ask());
    expect(r.go).toBe(true);
    expect(r.reasons).toEqual([]);
    const mm = r.checks.find((c) => c.id === 'measure.matmul')!;
    expect(mm.measured).toMatch(/^\d+ TFLOPS = 0\.\d\d of expected$/);
    expect(mm.source).toContain('H100 datasheet (SXM)');
  });

  it('a lane asking for 2 GPUs on a 1-GPU box is NO-GO: too few visible, no collective', () => {
    expect(statusOf(probe('h100x1', 'healthy-two-ranks'), two)).toEqual({
      go: false,
      bad: { 'gpus.visible': 'fail', 'measure.allreduce': 'fail' },
    });
  });

  it('CUDA_VISIBLE_DEVICES="" hides the GPU: visible, is_available and the matmul fail', () => {
    const r = statusOf(probe('h100x1', 'hidden'));
    expect(r.go).toBe(false);
    expect(r.bad).toMatchObject({ 'gpus.visible': 'fail', 'torch.cuda': 'fail', 'measure.matmul': 'fail' });
    expect(judgeBox(probe('h100x1', 'hidden'), ask()).reasons[0]).toContain('CUDA_VISIBLE_DEVICES=""');
  });

  it("torch missing from the lane's Python", () => {
    const r = judgeBox(probe('h100x1', 'notorch'), ask());
    expect(r.go).toBe(false);
    expect(r.checks.find((c) => c.id === 'torch.versions')!.measured).toContain("No module named 'torch'");
  });

  it('a nearly full filesystem at the out_dir fails that disk check only', () => {
    expect(
      statusOf(
        probe('h100x1', 'fulldisk'),
        ask({ outDir: '/mnt/nsa-small/out', outDirSource: 'out_dir: the flag' }),
      ),
    ).toEqual({
      go: false,
      bad: { 'disk.out_dir': 'fail' },
    });
  });

  it('a foreign process holding most of the GPU memory fails, naming it', () => {
    const r = judgeBox(probe('h100x1', 'foreign'), ask());
    expect(statusOf(probe('h100x1', 'foreign')).bad).toEqual({ 'gpu.processes#0': 'fail' });
    expect(r.reasons[0]).toContain('pid 1037 python3 64960 MiB');
  });

  it('2×H100 NVLink: GO; NCCL_P2P_DISABLE=1 drops the bus bandwidth under the floor (warn) and is named', () => {
    const healthy = judgeBox(probe('h100x2', 'two-healthy'), two);
    expect(healthy.go).toBe(true);
    const ar = healthy.checks.find((c) => c.id === 'measure.allreduce')!;
    expect(ar.status).toBe('pass');
    expect(ar.expected).toContain('NVLink 4');
    const nop2p = statusOf(probe('h100x2', 'two-nop2p'), two);
    expect(nop2p.go).toBe(true);
    expect(nop2p.bad).toMatchObject({ 'measure.allreduce': 'warn', 'env.collectives': 'warn' });
    expect(probe('h100x2', 'two-nop2p').env.NCCL_P2P_DISABLE).toBe('1');
  });
});

describe('faults injected into a real probe output', () => {
  const healthy = probe('h100x1', 'healthy');
  it('a slow matmul warns, a very slow one fails', () => {
    const at = (t: number) =>
      statusOf(edit(healthy, (q) => (q.measure!.ranks[0]!.tflops = t))).bad['measure.matmul#0'];
    expect(at(400)).toBe('warn');
    expect(at(150)).toBe('fail');
  });
  it('an XID 79 in the kernel log fails; an unreadable log is skipped', () => {
    const xid = edit(
      healthy,
      (q) => (q.kernelLog.text += '[ 9.1] NVRM: Xid (PCI:0000:04:00): 79, GPU has fallen off the bus.\n'),
    );
    expect(statusOf(xid).bad['host.xid']).toBe('fail');
    const hidden = edit(healthy, (q) => {
      q.kernelLog = {
        source: 'dmesg',
        text: null,
        error: 'dmesg: read kernel buffer failed: Operation not permitted',
      };
    });
    expect(judgeBox(hidden, ask()).checks.find((c) => c.id === 'host.xid')!.status).toBe('skip');
  });
  it('no hook and no py-spy: the stack check warns', () => {
    expect(statusOf(healthy, ask({ stackSignal: 0 })).bad['stacks.rung']).toBe('warn');
    const spy = edit(healthy, (q) => (q.pyspy = '/usr/bin/py-spy'));
    expect(statusOf(spy, ask({ stackSignal: 0 })).bad['stacks.rung']).toBeUndefined();
  });
  it('torch built for a newer CUDA than the driver fails', () => {
    expect(statusOf(edit(healthy, (q) => (q.torch.cuda = '13.2'))).bad['torch.versions']).toBe('fail');
  });
  it('little host memory for the ranks warns', () => {
    const low = edit(
      healthy,
      (q) => (q.meminfo = q.meminfo!.replace(/MemAvailable:\s+\d+/, 'MemAvailable: 3000000')),
    );
    expect(statusOf(low).bad['host.memory']).toBe('warn');
  });
  it('nvidia-smi missing: NO-GO said in one check', () => {
    const none = edit(healthy, (q) => (q.smiQuery = { out: '', err: 'nvidia-smi: not found', code: 127 }));
    expect(judgeBox(none, ask()).reasons[0]).toContain('nvidia-smi answers: exit 127: nvidia-smi: not found');
  });
});

describe('a real H200 box', () => {
  it('healthy: GO, its matmul judged against the H200 rate; a foreign process: NO-GO', () => {
    const r = judgeBox(probe('h200x1', 'healthy'), ask());
    expect(r.go).toBe(true);
    expect(r.checks.find((c) => c.id === 'measure.matmul')!.source).toBe('NVIDIA H200 datasheet (SXM)');
    expect(statusOf(probe('h200x1', 'foreign')).bad).toEqual({ 'gpu.processes#0': 'fail' });
  });
});
