import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LaneError, validateLane } from '../../src/lanes/lane.js';
import { brokenLaneLines, getLane, laneDirs, loadLaneFile, loadLanes } from '../../src/lanes/load.js';

const RUNBOOK_LANES = [
  'baseline',
  'batched-prefill',
  'conservative',
  'sdpa-flash-only',
  'sdpa-no-flash',
  'fp32',
  'deterministic',
  'anomaly',
  'two-step-trace',
  'tb-on',
  'mem-dump',
  'branch-cmp',
  'branch-sel',
  'branch-win',
  'gc-range-0-6',
  'gc-range-6-12',
];

describe('bundled presets', () => {
  const lanes = loadLanes(laneDirs('/nonexistent-project', { HOME: '/nonexistent-home' }));

  it('has every runbook lane, each valid', () => {
    for (const name of RUNBOOK_LANES) expect(lanes.has(name), name).toBe(true);
  });

  it('baseline is the smoke defaults with sequential prefill; batched-prefill adds the fix', () => {
    const base = lanes.get('baseline')!;
    expect(base.env).toEqual({
      NSA_TB_DISABLE: '1',
      NSA_DISABLE_CSV_LOGS: '1',
      NSA_HEARTBEAT_EVERY: '1',
      NSA_DISABLE_AUX_STATS: '1',
    });
    const batched = lanes.get('batched-prefill')!;
    expect(batched.env).toEqual({ ...base.env, NSA_PREFILL_BATCHED: '1' });
  });

  it('defaults the stop policy to .HALT then SIGINT then SIGKILL', () => {
    const p = lanes.get('baseline')!;
    expect(p.stop.halt).toBe(true);
    expect(p.stop.haltWaitS).toBeGreaterThan(0);
    expect(p.acceptance).toMatchObject({ finiteLoss: true, noStall: true, vramLimitMiB: 20480 });
  });
});

describe('preset validation', () => {
  it('names the file and field of every error', () => {
    expect(() => validateLane({ name: 'x', env: { 'BAD-NAME': '1' } }, 'my.yaml')).toThrow(
      'my.yaml: field "env.BAD-NAME"',
    );
    expect(() => validateLane({ name: 'Bad Name' }, 'a.yaml')).toThrow('a.yaml: field "name"');
    expect(() => validateLane({ name: 'x', steps: -1 }, 'b.yaml')).toThrow('field "steps"');
    expect(() => validateLane({ name: 'x', acceptance: { vramLimitMiB: 'lots' } }, 'c.yaml')).toThrow(
      'field "acceptance.vramLimitMiB"',
    );
    expect(() => validateLane({ name: 'x', stepz: 3 }, 'd.yaml')).toThrow(
      'field "stepz": is not a known field',
    );
    expect(() => validateLane({ name: 'x', stepRegex: '(' }, 'e.yaml')).toThrow('field "stepRegex"');
    expect(() => validateLane({ name: 'x', stepRegex: 'step (\\d+)' }, 'f.yaml')).toThrow('named groups');
  });

  it('a lane may state a throughput target (for the report); a wrong one names the field', () => {
    expect(validateLane({ name: 'l', target: { toksPerS: 50 } }, 'l.yaml').target).toEqual({
      toksPerS: 50,
    });
    expect(validateLane({ name: 'l' }, 'l.yaml').target).toBeUndefined();
    expect(() => validateLane({ name: 'l', target: { toks: 50 } }, 'l.yaml')).toThrow(
      'l.yaml: field "target.toks": is not a known field (toksPerS)',
    );
    expect(() => validateLane({ name: 'l', target: { toksPerS: 'fast' } }, 'l.yaml')).toThrow(
      'field "target.toksPerS"',
    );
    expect(loadLanes().get('demo-slow-prefill')?.target).toEqual({ toksPerS: 50 });
  });

  it('reports YAML syntax errors with the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-presets-'));
    const f = join(dir, 'broken.yaml');
    writeFileSync(f, 'name: x\nenv: [unclosed\n');
    expect(() => loadLaneFile(f)).toThrow(LaneError);
    expect(() => loadLaneFile(f)).toThrow(f);
  });

  it('lets the config dir and the project folder add and override lanes', () => {
    const home = mkdtempSync(join(tmpdir(), 'nsa-home-'));
    const proj = mkdtempSync(join(tmpdir(), 'nsa-proj-'));
    const cfg = join(home, '.config', 'nsa-dbg', 'presets');
    const projDir = join(proj, '.nsa-dbg', 'presets');
    for (const d of [cfg, projDir]) mkdirSync(d, { recursive: true });
    writeFileSync(join(cfg, 'mine.yaml'), 'name: mine\nenv: {A: "1"}\n');
    writeFileSync(join(projDir, 'baseline.yaml'), 'name: baseline\ndescription: pinned\nenv: {B: "2"}\n');
    const lanes = loadLanes(laneDirs(proj, { HOME: home }));
    expect(lanes.get('mine')!.env).toEqual({ A: '1' });
    expect(lanes.get('baseline')!.description).toBe('pinned');
    expect(lanes.get('baseline')!.source).toBe(join(projDir, 'baseline.yaml'));
  });

  it('says where a broken file is wrong: path, line and column, the field, no dangling code frame', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nsa-presets-'));
    const syntax = join(dir, 'x.yaml');
    writeFileSync(syntax, 'name: x\ndescription: broken\nenv: {A: [1, 2\n');
    expect(() => loadLaneFile(syntax)).toThrow(
      `${syntax}:4:1: field "env": Flow sequence in block collection must be sufficiently indented and end with a ]`,
    );
    const field = join(dir, 'y.yaml');
    writeFileSync(field, 'name: y\ndetector:\n  floorS: 1\n  k: -2\n');
    expect(() => loadLaneFile(field)).toThrow(`${field}:4:3: field "detector.k": must be a number ≥ 1`);
    const phase = join(dir, 'z.yaml');
    writeFileSync(phase, 'name: z\nphases:\n  - steps: 1\n  - steps: 0\n');
    expect(() => loadLaneFile(phase)).toThrow(`${phase}:4:5: field "phases[1].steps"`);
  });

  it('skips a broken file: the other lanes load, its own name is an error, which file overrides which', () => {
    const home = mkdtempSync(join(tmpdir(), 'nsa-home-'));
    const proj = mkdtempSync(join(tmpdir(), 'nsa-proj-'));
    const projDir = join(proj, '.nsa-dbg', 'presets');
    mkdirSync(projDir, { recursive: true });
    writeFileSync(join(projDir, 'x.yaml'), 'name: x\nenv: {A: [1, 2\n');
    // a broken override of a bundled lane: the bundled one is not used in its place
    writeFileSync(join(projDir, 'fp16.yaml'), 'name: fp16\nsteps: zero\n');
    writeFileSync(join(projDir, 'baseline.yaml'), 'name: baseline\ndescription: pinned\n');
    const lanes = loadLanes(laneDirs(proj, { HOME: home }));
    expect(getLane(lanes, 'batched-prefill').name).toBe('batched-prefill');
    expect(lanes.broken.map((b) => b.names)).toEqual([['fp16'], ['x']]);
    expect(() => getLane(lanes, 'x')).toThrow(/x\.yaml:3:1: field "env"/);
    expect(() => getLane(lanes, 'fp16')).toThrow(/fp16\.yaml:2:1: field "steps"/);
    expect(() => getLane(lanes, 'nope')).toThrow(/unknown lane "nope"/);
    expect(lanes.overridden.get('baseline')).toEqual([join(laneDirs()[0]!, 'baseline.yaml')]);
    expect(brokenLaneLines(lanes)).toHaveLength(2);
    expect(brokenLaneLines(lanes, ['x'])).toEqual([expect.stringMatching(/fp16\.yaml/)]);
  });
});

describe('how a lane drives a trainer', () => {
  /** the run spec of a lane made of `doc`, running `command` */
  const specOf = async () => {
    const { buildRunSpec } = await import('../../src/runs/build-spec.js');
    return (doc: Record<string, unknown>, command: string[], steps?: number) =>
      buildRunSpec({
        lane: validateLane({ name: 't', ...doc }, 't.yaml'),
        command,
        steps,
        runsRoot: '/r',
        cwd: '/w',
      });
  };
  it('stepsFlag: --key= takes one argument, "" none, unset the known trainer’s; the command’s own count', async () => {
    const spec = await specOf();
    const nano = ['python', 'train.py', 'config/x.py', '--device=cpu'];
    expect(spec({}, nano, 50).argv.slice(-1)).toEqual(['--max_iters=50']);
    expect(spec({ stepsFlag: '--steps' }, nano, 50).argv.slice(-2)).toEqual(['--steps', '50']);
    expect(spec({ stepsFlag: '' }, nano, 50).argv).toEqual(nano);
    expect(spec({}, ['python', 'scripts/train_showcase.py'], 7).argv.slice(-2)).toEqual(['--steps', '7']);
    // no --steps: the count the command passes is the run's (acceptance reads it)
    expect(spec({}, [...nano, '--max_iters=300']).steps).toBe(300);
    expect(spec({ stepsFlag: '--iters' }, ['t.py', '--iters', '40']).steps).toBe(40);
  });

  it('the command’s own count wins: the lane’s steps only set the acceptance; a contradicting --steps is refused', async () => {
    const { StepsConflict } = await import('../../src/runs/build-spec.js');
    const spec = await specOf();
    const mingpt = ['python', 'chargpt.py', '--trainer.max_iters=201'];
    // seen: a lane with steps 200 appended --trainer.max_iters=200 after the user's 201 (the trainer takes the last)
    const s = spec({ steps: 200, stepsFlag: '--trainer.max_iters=' }, mingpt);
    expect(s.argv).toEqual(mingpt);
    expect(s.steps).toBe(200);
    // the same count on both sides is no contradiction, and nothing is appended
    expect(spec({ stepsFlag: '--trainer.max_iters=' }, mingpt, 201).argv).toEqual(mingpt);
    expect(() => spec({ stepsFlag: '--trainer.max_iters=' }, mingpt, 50)).toThrow(StepsConflict);
    expect(() => spec({ stepsFlag: '--trainer.max_iters=' }, mingpt, 50)).toThrow(
      "--steps 50 contradicts the command's own --trainer.max_iters=201",
    );
    expect(() => spec({}, ['python', 'scripts/train_showcase.py', '--steps', '9'], 5)).toThrow(StepsConflict);
  });

  it('outDir and stackSignal are validated with their field named', () => {
    expect(validateLane({ name: 'x', outDir: 'artifacts/x', stackSignal: 'off' }, 'a.yaml')).toMatchObject({
      outDir: 'artifacts/x',
      stackSignal: 0,
    });
    expect(validateLane({ name: 'x', stackSignal: 40 }, 'a.yaml').stackSignal).toBe(40);
    expect(() => validateLane({ name: 'x', stackSignal: 10 }, 'a.yaml')).toThrow('field "stackSignal"');
    expect(() => validateLane({ name: 'x', stepsFlag: '--a b' }, 'a.yaml')).toThrow('field "stepsFlag"');
  });
});
