// Regenerate test/fixtures/report/notebook.json from REAL demo runs, with this machine's paths
// replaced so the committed file names no local folder. Run after `npm run build`:
//   node test/helpers/make-report-fixture.mjs
// then refresh the goldens: UPDATE_GOLDEN=1 npx vitest run test/unit/report
// The cells (about 4 minutes):
//   c1 baseline 8 steps: hangs at step 6 (stopped by nsa-dbg once confirmed)
//   c2 batched-prefill 8: passes;  c3 fp16 8: NaN at step 2;  c4 fa2 8: crash at step 1
//   c5 demo-slow-prefill 3: slow but alive (GO, slow) and below its lane's toks/s target
//   c6 batched-prefill 100: a long pass beside the short runs (the chart's step axis)
//   then bisection b1 (batched-prefill vs demo-many-flags, 8 steps), its trials as cells
//   and last a batched-prefill cell stopped by the user (the notebook closed while it ran)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = realpathSync(join(import.meta.dirname, '..', '..'));
const bin = join(root, 'bin', 'nsa-dbg');
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'nsa-report-fixture-')));
const env = { ...process.env, NSA_DBG_HOME: join(dir, 'home'), XDG_CONFIG_HOME: join(dir, 'config') };

function cli(args, ok = [0, 1]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: dir, env, encoding: 'utf8' });
  process.stderr.write(`${args.join(' ')}: exit ${r.status}\n`);
  if (!ok.includes(r.status)) throw new Error(r.stderr);
}

for (const [lane, steps] of [
  ['baseline', 8],
  ['batched-prefill', 8],
  ['fp16', 8],
  ['fa2', 8],
  ['demo-slow-prefill', 3],
  ['batched-prefill', 100],
])
  cli([
    'run',
    '--demo',
    '--headless',
    '--json',
    '--notebook',
    'step5.json',
    '--lane',
    lane,
    '--steps',
    String(steps),
  ]);
cli([
  'bisect',
  '--demo',
  '--good',
  'batched-prefill',
  '--bad',
  'demo-many-flags',
  '--steps',
  '8',
  '--notebook',
  'step5.json',
]);

// a cell the user stopped: the notebook (as the TUI drives it) closed while the cell ran
{
  process.env.NSA_DBG_HOME = env.NSA_DBG_HOME;
  process.env.XDG_CONFIG_HOME = env.XDG_CONFIG_HOME;
  const { NotebookController } = await import(join(root, 'dist', 'src', 'notebook', 'controller.js'));
  const { NotebookStore } = await import(join(root, 'dist', 'src', 'notebook', 'store.js'));
  const { notebookDeps } = await import(join(root, 'dist', 'src', 'cli', 'notebook-deps.js'));
  const { localOpener } = await import(join(root, 'dist', 'src', 'cli', 'open-session.js'));
  const store = NotebookStore.open(join(dir, 'step5.json'));
  const controller = new NotebookController(store, notebookDeps(localOpener(), { demo: true, cwd: dir }));
  const id = controller.start({ lane: 'batched-prefill' });
  const deadline = Date.now() + 60_000;
  while (!/ · step [3-9]\//.test(controller.getState().live ?? '')) {
    if (Date.now() > deadline) throw new Error(`${id} did not reach step 3: ${controller.getState().live}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await controller.close();
  process.stderr.write(`${id}: stopped by closing the notebook\n`);
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
