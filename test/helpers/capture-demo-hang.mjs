// Capture test/fixtures/demo-hang/: a REAL run of the bundled demo trainer on the `baseline` lane
// (`nsa-dbg run --demo --headless --lane baseline --steps 8`): it spins in
// _forward_prefill_sequential at step 6, nsa-dbg samples its stack until the hang is confirmed
// (one near-identical dump each time) and stops it. The run folder is copied with this machine's
// paths replaced. Run after `npm run build`:
//   node test/helpers/capture-demo-hang.mjs
import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = realpathSync(join(import.meta.dirname, '..', '..'));
const out = join(root, 'test', 'fixtures', 'demo-hang');
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'demo-hang-')));
const r = spawnSync(
  process.execPath,
  [
    join(root, 'bin', 'nsa-dbg'),
    'run',
    '--demo',
    '--headless',
    '--json',
    '--lane',
    'baseline',
    '--steps',
    '8',
    '--runs-dir',
    'runs',
  ],
  { cwd: dir, env: { ...process.env, NSA_DBG_HOME: join(dir, 'home') }, encoding: 'utf8' },
);
process.stderr.write(`exit ${r.status}\n${r.stderr}\n`);
const run = join(dir, 'runs', readdirSync(join(dir, 'runs'))[0]);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const f of readdirSync(run, { withFileTypes: true })) {
  if (!f.isFile() || f.name === 'pid') continue;
  const text = readFileSync(join(run, f.name), 'utf8');
  writeFileSync(
    join(out, f.name),
    text.split(dir).join('/home/user/demo').split(root).join('/home/user/nsa-dbg'),
  );
}
rmSync(dir, { recursive: true, force: true });
process.stderr.write(`wrote ${out}\n`);
