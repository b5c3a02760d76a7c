import { describe, expect, it } from 'vitest';
import { LaneError, validateLane } from '../../src/lanes/lane.js';
import { laneDirs, loadLanes } from '../../src/lanes/load.js';
import { scriptOf } from '../../src/lanes/torchrun.js';
import { buildRunSpec } from '../../src/runs/build-spec.js';
import { launcherScript } from '../../src/runs/launcher.js';

const DDP_LANES = [
  'ddp-nccl',
  'ddp-gloo',
  'ddp-static-graph',
  'ddp-branch-cmp',
  'ddp-branch-sel',
  'ddp-branch-win',
  'ddp-gc-0-6',
  'ddp-gc-6-12',
  'ddp-trace-grads',
];

describe('lanes that launch through torchrun', () => {
  const lanes = loadLanes(laneDirs('/nonexistent-project', { HOME: '/nonexistent-home' }));

  it('bundles the DDP matrix, each a torchrun lane', () => {
    for (const name of DDP_LANES) expect(lanes.get(name)?.launcher, name).toMatchObject({ nprocPerNode: 2 });
    expect(lanes.get('ddp-gloo')!.env.TORCH_BACKEND).toBe('gloo');
    expect(lanes.get('ddp-branch-sel')!.env.NSA_FORCE_BRANCH).toBe('sel');
    expect(lanes.get('ddp-gc-6-12')!.env.NSA_GC_RANGE).toBe('6:12');
    expect(lanes.get('ddp-static-graph')!.env.NSA_DDP_STATIC_GRAPH).toBe('1');
  });

  it('builds the torchrun line: nproc, --log_dir in the run dir, the lane flags, then the script', () => {
    const spec = buildRunSpec({
      lane: lanes.get('ddp-nccl')!,
      runsRoot: '/r',
      cwd: '/w',
      command: ['python3', '-u', 'scripts/train_showcase.py', '--dataset', 'synthetic'],
      steps: 5,
    });
    expect(spec.argv).toEqual([
      'torchrun',
      '--nproc_per_node',
      '2',
      '--log_dir',
      `${spec.runDir}/torchrun-logs`,
      '--tee',
      '3',
      'scripts/train_showcase.py',
      '--dataset',
      'synthetic',
      '--steps',
      '5',
    ]);
    // launched in a PTY here; the command is a torchrun line of one word
    expect(spec.launcher).toEqual({ kind: 'pty' });
    expect(spec.torchrun).toEqual({ nprocPerNode: 2, commandWords: 1 });
    // the NCCL Flight Recorder dumps into the run dir, with the evidence
    expect(spec.env.TORCH_NCCL_DEBUG_INFO_TEMP_FILE).toBe(`${spec.runDir}/nccl_trace_rank_`);
    expect(spec.env.TORCH_NCCL_TRACE_BUFFER_SIZE).toBe('2000');
    // the launcher execs torchrun: its pid is the launcher's, which never gets SIGUSR1
    expect(launcherScript(spec)).toMatch(/exec "\$@"' \S+ torchrun --nproc_per_node 2 /);
  });

  it('the default trainer under torchrun keeps its DDP default; a python -m entry point stays a module', () => {
    const spec = buildRunSpec({
      lane: lanes.get('ddp-gloo')!,
      runsRoot: '/r',
      cwd: '/w',
      nprocPerNode: 4,
    });
    expect(spec.argv.slice(0, 3)).toEqual(['torchrun', '--nproc_per_node', '4']);
    expect(spec.argv).not.toContain('--ddp');
    expect(spec.argv).toContain('scripts/train_showcase.py');
    expect(scriptOf(['/usr/bin/python3', '-u', '-m', 'pkg.train', '--x'])).toEqual([
      '-m',
      'pkg.train',
      '--x',
    ]);
    expect(scriptOf(['train.py', '--x'])).toEqual(['train.py', '--x']);
  });

  it('a broken launcher names the field', () => {
    const bad = (launcher: unknown) => () => validateLane({ name: 'x', launcher }, 'x.yaml');
    expect(bad({ srun: {} })).toThrow(LaneError);
    expect(bad({ torchrun: { nproc_per_node: 0 } })).toThrow(/launcher.torchrun.nproc_per_node/);
    expect(bad({ torchrun: { nproc_per_node: 2, args: 'tee' } })).toThrow(/launcher.torchrun.args/);
    expect(bad({ torchrun: { nproc_per_node: 2, nnodes: 2 } })).toThrow(/launcher.torchrun.nnodes/);
    const ok = validateLane(
      {
        name: 'x',
        launcher: { torchrun: { command: '/usr/bin/python3 -m torch.distributed.run', nproc_per_node: 3 } },
      },
      'x.yaml',
    );
    expect(ok.launcher).toEqual({
      command: ['/usr/bin/python3', '-m', 'torch.distributed.run'],
      nprocPerNode: 3,
      args: [],
    });
  });
});
