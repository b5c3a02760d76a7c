/**
 * The teardown snapshot's liveness check on this machine reads each rank's state synchronously from
 * /proc (src/runs/proc-facts.ts localProcStates): a sleeping process, a stopped one, and one that
 * has exited, on real processes.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { localProcStates } from '../../../src/runs/proc-facts.js';

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe('localProcStates', () => {
  it('reads a sleeping and a stopped process; one that exited (and was reaped) is absent', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    const pid = child.pid!;
    try {
      await until(() => localProcStates([pid]).get(pid) === 'S');
      expect(localProcStates([pid]).get(pid)).toBe('S');
      process.kill(pid, 'SIGSTOP');
      await until(() => localProcStates([pid]).get(pid) === 'T');
      expect(localProcStates([pid]).get(pid)).toBe('T');
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(pid, 'SIGKILL');
      await exited;
      await until(() => !localProcStates([pid]).has(pid));
      expect(localProcStates([pid, 2 ** 22 + 1]).size).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('this process: running', () => {
    expect(localProcStates([process.pid]).get(process.pid)).toBe('R');
  });
});
