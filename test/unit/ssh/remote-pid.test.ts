import { describe, expect, it } from 'vitest';
import { killCommand, PidSniffer } from '../../../src/targets/ssh/remote-pid.js';

describe('PidSniffer', () => {
  it('takes the pid line off stderr even when it arrives in pieces', () => {
    const passed: string[] = [];
    const s = new PidSniffer((b) => passed.push(b.toString()));
    s.write(Buffer.from('NSA_DBG'));
    s.write(Buffer.from('_PID=4321\nreal err'));
    s.write(Buffer.from('or\n'));
    expect(s.pid).toBe(4321);
    expect(passed.join('')).toBe('real error\n');
  });

  it('passes stderr through untouched when there is no pid line', () => {
    const passed: string[] = [];
    const s = new PidSniffer((b) => passed.push(b.toString()));
    s.write(Buffer.from('sh: 1: cd: can'));
    s.end();
    expect(s.pid).toBeNull();
    expect(passed.join('')).toBe('sh: 1: cd: can');
  });

  it('kills the process group, falling back to the pid', () => {
    expect(killCommand(77)).toBe('kill -KILL -- -77 2>/dev/null || kill -KILL 77');
  });
});
