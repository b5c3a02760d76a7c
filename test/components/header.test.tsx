import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { DEMO_MARKER, Header } from '../../panels/Header.js';
import type { JobState } from '../../src/slurm/job.js';
import { jobLine } from '../../src/slurm/slurm-kind.js';
import { frameLines } from '../helpers/render.js';
import { runningState } from './sample-state.js';

const header = (partial: Parameters<typeof runningState>[0] = {}) => {
  const s = runningState(partial);
  return frameLines(render(<Header {...s} width={100} color={false} />).lastFrame());
};

const job = (state: string, reason: string | null, nodes: string | null = null): JobState => ({
  jobId: '41',
  state,
  reason,
  nodes,
  exitCode: null,
  signal: null,
  source: 'squeue',
});

describe('Header', () => {
  it('shows target, lane, run state, elapsed, step of total and pid on the first line', () => {
    const [line1] = header();
    expect(line1).toContain('local');
    expect(line1).toContain('batched-prefill');
    expect(line1).toContain('running');
    expect(line1).toContain('1m 02s');
    expect(line1).toContain('step 17/40');
    expect(line1).toContain('pid 4162');
  });

  it('is always two lines, the second showing the lane description when nothing needs attention', () => {
    const lines = header();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('baseline plus the batched prefill fix');
  });

  it('a launch with words of its own (a Slurm job, agents on hosts): in place of the pid, escapes cut', () => {
    const [pending] = header({
      runState: 'starting',
      launchLine: jobLine('41', job('PENDING', 'Resources')),
    });
    expect(pending).toContain('job 41 PENDING (Resources)');
    expect(pending).not.toContain('pid');
    const [running] = header({ launchLine: jobLine('41', job('RUNNING', null, 'gpu[01-02]')) });
    expect(running).toContain('job 41 RUNNING on gpu[01-02]');
    // a node name or reason comes from the cluster: untrusted, drawn without its escapes
    const [hostile] = header({ launchLine: 'job 41 PENDING (\x1b[2Jgone)' });
    expect(hostile).toContain('job 41 PENDING (gone)');
  });

  it('says plainly when the trainer and GPU are simulated', () => {
    expect(header({ simulated: true })[1]).toContain(DEMO_MARKER);
    expect(DEMO_MARKER).toBe('DEMO: simulated trainer and GPU');
  });

  it('shows a connection outage', () => {
    const [, line2] = header({ connection: { state: 'reconnecting', outageS: 12, attempts: 3 } });
    expect(line2).toContain('connection reconnecting');
    expect(line2).toContain('12.0s');
    expect(line2).toContain('3 attempts');
    expect(header({ connection: { state: 'up' } })[1]).not.toContain('connection');
  });

  it('shows the verdict summary; the notice is not squeezed in after it (the status line has it)', () => {
    const [, line2] = header({
      verdict: { verdict: 'hang', summary: 'hang at step 6 (in-step), rank 0' },
      notice: 'SIGUSR1 sent to pid 4162',
    });
    expect(line2).toContain('HANG: at step 6 (in-step), rank 0');
    expect(line2).not.toContain('SIGUSR1 sent to pid 4162');
  });

  it('says which step is in progress, and stops the clock when the run has ended', () => {
    const [running] = header({ step: 4, stepsDone: 3, totalSteps: 12, runState: 'running' });
    expect(running).toContain('step 3/12 (4 running)');
    const now = Date.now();
    const [ended] = header({
      step: 12,
      stepsDone: 12,
      totalSteps: 12,
      runState: 'exited',
      exitCode: 0,
      startedAt: now - 600_000,
      endedAt: now - 540_000,
      now,
    });
    expect(ended).toContain('step 12/12');
    expect(ended).toContain('1m 00s'); // 60 s from start to end, not the 10 min since the start
  });

  it('does not repeat the verdict word: PASS: 12 steps, not PASS: pass: 12 steps', () => {
    const [, line2] = header({ verdict: { verdict: 'pass', summary: 'pass: 12 steps, median 80 toks/s' } });
    expect(line2).toContain('PASS: 12 steps, median 80 toks/s');
    expect(line2).not.toContain('PASS: pass');
  });

  it('shows the exit code of a finished run and copes with no start time', () => {
    const [line1] = header({
      runState: 'exited',
      exitCode: 137,
      startedAt: null,
      totalSteps: undefined,
      pid: undefined,
    });
    expect(line1).toContain('exited 137');
    expect(line1).toMatch(/· – · step 17$/);
    expect(line1).not.toContain('pid');
  });
});
