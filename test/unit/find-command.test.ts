import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CommandNotFound,
  pythonScript,
  requireCommand,
  ScriptNotFound,
} from '../../src/targets/find-command.js';
import { LocalTarget } from '../../src/targets/local.js';

describe('a trainer command is looked up before it is run', () => {
  it('finds the script a Python command runs', () => {
    expect(pythonScript(['python3', '-u', 'scripts/train_showcase.py', '--steps', '5'])).toBe(
      'scripts/train_showcase.py',
    );
    expect(pythonScript(['/usr/bin/python3.11', '-X', 'dev', '-W', 'error', 'train.py'])).toBe('train.py');
    expect(pythonScript(['python', '-m', 'torch.distributed.run', 'train.py'])).toBeNull();
    expect(pythonScript(['python3', '-c', 'print(1)'])).toBeNull();
    expect(pythonScript(['torchrun', 'train.py'])).toBeNull();
  });

  it('on the target, in the run’s folder, with the lane’s PATH', async () => {
    const t = new LocalTarget();
    const cwd = mkdtempSync(join(tmpdir(), 'nsa-find-'));
    writeFileSync(join(cwd, 'train.py'), '');
    const spec = (argv: string[], env: Record<string, string> = {}) => ({ argv, cwd, env });
    await expect(requireCommand(t, spec(['sh', '-c', 'true']))).resolves.toBeUndefined();
    await expect(requireCommand(t, spec(['python3', '-u', 'train.py']))).resolves.toBeUndefined();
    await expect(requireCommand(t, spec(['nosuchcmd_xyz']))).rejects.toThrow(
      new CommandNotFound('nosuchcmd_xyz', 'local'),
    );
    await expect(requireCommand(t, spec(['python3', 'missing.py']))).rejects.toBeInstanceOf(ScriptNotFound);
    // the lane's PATH replaces the login's: sh is not in an empty folder
    await expect(requireCommand(t, spec(['sh'], { PATH: cwd }))).rejects.toBeInstanceOf(CommandNotFound);
  });
});
