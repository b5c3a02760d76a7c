/**
 * Launchers typed in the command are recognised as a lane's `launcher:` is: the command's words
 * name them (src/lanes/launchers.ts), the run's script then tells the stack hook that only
 * processes with RANK are ranks where the launcher sets it, and the run's own pid stands for no
 * rank (src/runs/run-launcher.ts). The real torchrun run is test/integration/launcher-in-command.
 */
import { describe, expect, it } from 'vitest';
import { validateLane } from '../../src/lanes/lane.js';
import { launchersInCommand } from '../../src/lanes/launchers.js';
import { buildRunSpec } from '../../src/runs/build-spec.js';
import { launcherScript } from '../../src/runs/launcher.js';
import { runPidIsLauncher } from '../../src/runs/run-launcher.js';

const words = (s: string) => s.split(' ');

describe('launchers in the command', () => {
  it('names each as the user types it, outermost first', () => {
    const cases: Array<[string, string[]]> = [
      ['torchrun --standalone --nproc_per_node 3 train.py', ['torchrun']],
      ['python3 -m torch.distributed.run --standalone --nproc_per_node 3 train.py', ['torchrun']],
      ['/usr/bin/python3 -u -m torch.distributed.launch --nproc_per_node 2 train.py', ['torchrun']],
      ['python -um torch.distributed.run train.py', ['torchrun']],
      ['python3 /usr/bin/torchrun --nproc_per_node 2 train.py', ['torchrun']],
      ['/opt/venv/bin/torchrun train.py', ['torchrun']],
      ['accelerate launch --num_processes 2 train.py', ['accelerate']],
      ['python -m accelerate.commands.launch train.py', ['accelerate']],
      ['deepspeed --num_gpus 2 train.py --deepspeed ds.json', ['deepspeed']],
      ['python -u -m deepspeed.launcher.launch --world_info=x train.py', ['deepspeed']],
      ['srun -N 2 --ntasks-per-node 1 torchrun --nproc_per_node 4 train.py', ['srun', 'torchrun']],
      ['srun -n 4 python train.py', ['srun']],
      ['mpirun -np 4 python3 train.py', ['mpirun']],
      ['mpiexec -n 2 /usr/bin/python3 -m torch.distributed.run train.py', ['mpirun', 'torchrun']],
      ['env OMP_NUM_THREADS=1 torchrun train.py', ['torchrun']],
      ['NCCL_DEBUG=INFO torchrun train.py', ['torchrun']],
    ];
    for (const [cmd, want] of cases) expect(launchersInCommand(words(cmd)), cmd).toEqual(want);
  });

  it('names none where there is none: a script, its flags, `-c`, accelerate’s other commands', () => {
    for (const cmd of [
      'python3 -u train.py --launcher torchrun',
      'python3 train.py torchrun',
      'python3 -c import_torchrun',
      'python3 -m torch.distributed.checkpoint',
      'accelerate config',
      './run.sh',
      'nanogpt/train.py --compile=False',
      // words that an object literal would answer from Object.prototype
      'constructor train.py',
      '/usr/bin/toString train.py',
      'python3 -m constructor',
      'python3 -m __proto__ train.py',
      'python3 hasOwnProperty train.py',
    ])
      expect(launchersInCommand(words(cmd)), cmd).toEqual([]);
    expect(launchersInCommand([])).toEqual([]);
  });
});

describe('a plain lane with a launcher in its command', () => {
  const lane = validateLane(
    { name: 'plain', description: 'no launcher of its own', stepsFlag: '' },
    'plain.yaml',
  );
  const spec = (cmd: string) => buildRunSpec({ lane: lane, runsRoot: '/r', cwd: '/w', command: words(cmd) });
  const workersLine = (cmd: string) => /NSA_DBG_STACK_WORKERS=(\S+)/.exec(launcherScript(spec(cmd)))?.[1];

  it('torchrun and DeepSpeed start every rank with RANK: the stack hook registers only such processes', () => {
    expect(workersLine('python3 -m torch.distributed.run --standalone --nproc_per_node 3 train.py')).toBe(
      '1',
    );
    expect(workersLine('deepspeed train.py')).toBe('1');
    expect(workersLine('srun -n 2 torchrun train.py')).toBe('1');
    // srun and mpirun give a rank of their own (the hook reads it); one accelerate process has none
    expect(workersLine('srun -n 2 python train.py')).toBe('0');
    expect(workersLine('accelerate launch train.py')).toBe('0');
    expect(workersLine('python3 train.py')).toBe('0');
  });

  it('the run’s own pid is the launcher’s: never a rank to signal', () => {
    expect(runPidIsLauncher(spec('python3 -m torch.distributed.run --nproc_per_node 3 train.py'))).toBe(true);
    expect(runPidIsLauncher(spec('mpirun -np 2 python3 train.py'))).toBe(true);
    expect(runPidIsLauncher(spec('python3 -u train.py'))).toBe(false);
  });
});

describe('a torchrun lane with a launcher in its command', () => {
  const lane = validateLane(
    { name: 'tr', description: 'torchrun', stepsFlag: '', launcher: { torchrun: { nproc_per_node: 2 } } },
    'tr.yaml',
  );
  const build = (cmd: string) => () =>
    buildRunSpec({ lane: lane, runsRoot: '/r', cwd: '/w', command: words(cmd) });

  it('is refused in one line (torchrun around torchrun would start an agent per rank)', () => {
    expect(build('python3 -m torch.distributed.run --standalone --nproc_per_node 3 train.py')).toThrow(
      /^the lane launches through torchrun already: give the training script after --, without torchrun/,
    );
    expect(build('accelerate launch train.py')).toThrow(/without accelerate/);
    expect(build('python3 -u train.py')().argv.slice(0, 3)).toEqual(['torchrun', '--nproc_per_node', '2']);
  });
});
