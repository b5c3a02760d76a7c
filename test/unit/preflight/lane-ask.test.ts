import { describe, expect, it } from 'vitest';
import { validateLane } from '../../../src/lanes/lane.js';
import { bareLane, laneInterpreter, ranksOf } from '../../../src/preflight/lane-ask.js';
import { srunPrefix } from '../../../src/preflight/probe-run.js';

const lane = (doc: Record<string, unknown>) => validateLane({ name: 'l', ...doc }, 'l.yaml');

describe('what a lane asks of the box', () => {
  it("the lane's Python keeps its own flags (a -S Python has no site-packages, so no torch)", () => {
    expect(
      laneInterpreter(lane({ command: ['/opt/venv/bin/python3', '-S', '-u', 'train.py'] }), false),
    ).toEqual(['/opt/venv/bin/python3', '-S', '-u']);
    expect(laneInterpreter(lane({ command: ['python3', '-m', 'pkg.train'] }), false)).toEqual(['python3']);
    // not a Python (a shell wrapper), torchrun, the demo: plain python3
    expect(laneInterpreter(lane({ command: ['./train.sh'] }), false)).toEqual(['python3']);
    expect(
      laneInterpreter(
        lane({
          launcher: { torchrun: { command: 'python3.12 -m torch.distributed.run', nproc_per_node: 2 } },
        }),
        false,
      ),
    ).toEqual(['python3.12']);
    expect(laneInterpreter(bareLane(), true)).toEqual(['python3']);
  });

  it('ranks per node: torchrun’s nproc_per_node, the demo’s ranks, else one', () => {
    expect(ranksOf(lane({ launcher: { torchrun: { nproc_per_node: 8 } } }), false)).toEqual({
      n: 8,
      source: 'lane l: launcher.torchrun.nproc_per_node 8',
    });
    expect(ranksOf(lane({ demoEnv: { NSA_DEMO_RANKS: '2' } }), true).n).toBe(2);
    expect(ranksOf(lane({ demoEnv: { NSA_DEMO_RANKS: '2' } }), false).n).toBe(1);
  });

  it('--slurm: one probe a node through srun, with the job options', () => {
    expect(srunPrefix({ nodes: 2, partition: 'gpu', time: '5', sbatchArgs: ['--account=ml'] })).toEqual([
      'srun',
      '--nodes=2',
      '--ntasks-per-node=1',
      '--partition=gpu',
      '--time=5',
      '--account=ml',
    ]);
  });
});
