import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'nsa-nb-report-'));
const env = { NSA_DBG_HOME: join(dir, 'home'), XDG_CONFIG_HOME: join(dir, 'config') };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('report from a fresh notebook of real demo runs', () => {
  it('has one row per lane with its verdict, the chart, and a decision', { timeout: 300_000 }, async () => {
    const expected: Array<[string, number]> = [
      ['baseline', 1],
      ['batched-prefill', 0],
      ['fp16', 1],
      ['fa2', 1],
    ];
    for (const [lane, code] of expected) {
      const r = await runCli(
        ['run', '--demo', '--headless', '--json', '--notebook', 'ab.json', '--lane', lane, '--steps', '8'],
        { cwd: dir, env, timeoutMs: 180_000 },
      );
      expect(r.code, `${lane}: ${r.stderr}`).toBe(code);
    }
    // and a flag bisection, whose trials are cells of the same notebook
    const b = await runCli(
      [
        'bisect',
        '--demo',
        '--good',
        'batched-prefill',
        '--bad',
        'demo-many-flags',
        '--steps',
        '8',
        '--notebook',
        'ab.json',
      ],
      { cwd: dir, env, timeoutMs: 180_000 },
    );
    expect(b.code, b.stderr).toBe(0);
    const rep = await runCli(['report', 'ab.json', '-o', 'out/ab.md'], { cwd: dir, env });
    expect(rep.code, rep.stderr).toBe(0);
    const md = readFileSync(join(dir, 'out', 'ab.md'), 'utf8');
    expect(md.split('\n')[0]).toMatch(/^# \d{4}-\d{2}-\d{2} Test Engineer Report - ab v1$/);
    expect(md).toMatch(/^\*\*Platform\*\*: 1×NVIDIA /m);
    expect(md).toMatch(/^\| c1 baseline \| 5 \/ 8 \| step 6 /m);
    expect(md).toMatch(/^\| c2 batched-prefill \| 8 \/ 8 \| none \|/m);
    expect(md).toMatch(/^\| c3 fp16 \| 1 \/ 8 \| NaN at step 2 \|/m);
    expect(md).toMatch(/^\| c4 fa2 \| 0 \/ 8 \| crash at step 1 \|/m);
    expect(md).toContain('_forward_prefill_sequential');
    expect(md).toMatch(/^## GO\/NO-GO Decision: CONDITIONAL GO ⚠️$/m);
    // the trials go by what they ran; the conclusion is said once; the decision names its condition
    expect(md).toMatch(/^\| c\d+ batched-prefill \+ NSA_PREFILL_BATCHED unset \| 5 \/ 8 \| step 6 /m);
    expect(md.split('NSA_PREFILL_BATCHED unset → hang at step 6').length - 1).toBe(1);
    expect(md).toMatch(/^\*\*Decision\*\*: \*\*CONDITIONAL GO\*\* ⚠️ — GO with `NSA_PREFILL_BATCHED=1`/m);
    expect(md).toMatch(/^- Keep `NSA_PREFILL_BATCHED=1` \(bisection b1, /m);
    // the baseline's hang was stopped by nsa-dbg: no Crash section of its own KeyboardInterrupt
    const c1 = md.slice(md.indexOf('### c1 baseline'), md.indexOf('### c2 '));
    expect(c1).toContain('- **Stopped**: by nsa-dbg once the hang was confirmed');
    expect(c1).not.toContain('**Crash**');
    expect(md).toContain('![loss and toks/s by cell](ab.svg)');
    expect(existsSync(join(dir, 'out', 'ab.svg'))).toBe(true);
    // the report names evidence folders that exist beside the notebook
    for (const m of md.matchAll(/\*\*Evidence\*\*: `([^`]+)\/`/g))
      expect(existsSync(join(dir, m[1]!))).toBe(true);

    const again = await runCli(['report', 'ab.json', '-o', 'out/ab2.md'], { cwd: dir, env });
    expect(again.code).toBe(0);
    expect(readFileSync(join(dir, 'out', 'ab2.md'), 'utf8')).toBe(md.replace('(ab.svg)', '(ab2.svg)'));
  });

  it('an unknown cell or a missing notebook is a clear usage error', async () => {
    const missing = await runCli(['report', 'nope.json'], { cwd: dir, env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nope.json: no such notebook');
  });
});
