// Regenerate test/fixtures/report/notebook.json from REAL demo runs (one per lane: baseline hangs
// at step 5, batched-prefill passes, fp16 goes NaN, fa2 crashes), with this machine's paths
// replaced so the committed file names no local folder. Run after `npm run build`:
//   node test/helpers/make-report-fixture.mjs
// then refresh the goldens: UPDATE_GOLDEN=1 npx vitest run test/unit/report
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = realpathSync(join(import.meta.dirname, '..', '..'));
const bin = join(root, 'bin', 'nsa-dbg');
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'nsa-report-fixture-')));
const env = { ...process.env, NSA_DBG_HOME: join(dir, 'home'), XDG_CONFIG_HOME: join(dir, 'config') };
for (const lane of ['baseline', 'batched-prefill', 'fp16', 'fa2']) {
  const r = spawnSync(
    process.execPath,
    [
      bin,
      'run',
      '--demo',
      '--headless',
      '--json',
      '--notebook',
      'step5.json',
      '--lane',
      lane,
      '--steps',
      '8',
    ],
    { cwd: dir, env, encoding: 'utf8' },
  );
  process.stderr.write(`${lane}: exit ${r.status}\n`);
  if (r.status !== 0 && r.status !== 1) throw new Error(r.stderr);
}
const text = readFileSync(join(dir, 'step5.json'), 'utf8')
  .split(`${root}/`)
  .join('nsa-dbg/')
  .split(`${dir}/`)
  .join('')
  .split(dir)
  .join('.');
const nb = JSON.parse(text);
nb.subject = 'Step 5 Demo A-B';
writeFileSync(join(root, 'test', 'fixtures', 'report', 'notebook.json'), `${JSON.stringify(nb, null, 2)}\n`);
rmSync(dir, { recursive: true, force: true });
