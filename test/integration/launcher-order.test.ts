/**
 * The launcher script for real (sh): exit_code is the end of the run for the followers (the live
 * verdict is made once it appears and the files are drained), so when it appears stdout.log must
 * already hold all the trainer's output. A `tee` that is slow to start stands for a loaded box (the
 * trainer's last lines, a stop's traceback, sat in tee's pipe while the trainer had exited): the
 * trainer now writes the log itself, and a launcher that went back to a pipe fails here. A child
 * that keeps the output open (a helper the trainer started) must not hold the end back.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateLane } from '../../src/lanes/lane.js';
import { buildRunSpec } from '../../src/runs/build-spec.js';
import { launcherScript } from '../../src/runs/launcher.js';

const work = mkdtempSync(join(tmpdir(), 'nsa-dbg-launcher-order-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** a `tee` first on PATH that waits, then is the real one */
function slowTee(): string {
  const bin = join(work, 'bin');
  mkdirSync(bin, { recursive: true });
  const real = spawnSync('sh', ['-c', 'command -v tee'], { encoding: 'utf8' }).stdout.trim();
  writeFileSync(join(bin, 'tee'), `#!/bin/sh\nsleep 1\nexec ${real} "$@"\n`);
  chmodSync(join(bin, 'tee'), 0o755);
  return bin;
}

describe('launcher script', () => {
  it.each(['tee', 'file'] as const)('%s: exit_code appears only once stdout.log holds every line', (mode) => {
    const lane = validateLane({ name: 'lane', env: {} }, 'lane.yaml');
    const spec = buildRunSpec({
      lane,
      runsRoot: join(work, mode),
      cwd: work,
      command: ['sh', '-c', 'echo first; echo last words; exit 3'],
    });
    mkdirSync(spec.runDir, { recursive: true });
    writeFileSync(join(spec.runDir, 'run.sh'), launcherScript(spec, mode));
    // the script in the background; this side watches the folder as a follower would
    const watcher = `sh run.sh >/dev/null 2>&1 &
      while [ ! -e exit_code ]; do sleep 0.01; done
      cat stdout.log; echo "== exit $(cat exit_code)"; wait`;
    const r = spawnSync('sh', ['-c', watcher], {
      cwd: spec.runDir,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${slowTee()}:${process.env.PATH}` },
      timeout: 20_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('first\nlast words\n== exit 3\n');
    expect(existsSync(join(spec.runDir, 'exit_code.tmp'))).toBe(false);
    expect(readFileSync(join(spec.runDir, 'stdout.log'), 'utf8')).toBe('first\nlast words\n');
  });

  it.each(['tee', 'file'] as const)(
    '%s: a child holding the output does not hold the end back, and is named before exit_code appears',
    (mode) => {
      const lane = validateLane({ name: 'lane', env: {} }, 'lane.yaml');
      const spec = buildRunSpec({
        lane,
        runsRoot: join(work, `child-${mode}`),
        cwd: work,
        // the child inherits the trainer's stdout and outlives it by far
        command: [
          'sh',
          '-c',
          'echo first; sleep 600 & echo "$!" > "$NSA_DBG_RUN_DIR/child.pid"; echo last words; exit 3',
        ],
      });
      mkdirSync(spec.runDir, { recursive: true });
      writeFileSync(join(spec.runDir, 'run.sh'), launcherScript(spec, mode));
      // as a follower would: the end, what it says then; then the child goes and the launcher follows
      const watcher = `sh run.sh >/dev/null 2>&1 & r=$!
        while [ ! -e exit_code ]; do sleep 0.01; done
        cat stdout.log; echo "== exit $(cat exit_code)"; cat output_held
        kill -0 "$r" && echo "== launcher waits for the child"
        kill "$(cat child.pid)"; wait "$r"; echo "== launcher done"`;
      const r = spawnSync('sh', ['-c', watcher], { cwd: spec.runDir, encoding: 'utf8', timeout: 20_000 });
      const child = readFileSync(join(spec.runDir, 'child.pid'), 'utf8').trim();
      // the child is this test's, whatever the launcher did
      try {
        process.kill(Number(child), 'SIGKILL');
      } catch {}
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe(
        `first\nlast words\n== exit 3\n${child} sleep 600 \n== launcher waits for the child\n== launcher done\n`,
      );
    },
  );
});
