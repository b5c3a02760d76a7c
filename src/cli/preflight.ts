import { spawnSync } from 'node:child_process';

/** A missing tool is named, with how to install it, before anything starts. */
export async function requirePython(): Promise<void> {
  const r = spawnSync('python3', ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    process.stderr.write(
      'nsa-dbg: python3 not found; the demo trainer needs it.\n  Debian/Ubuntu: apt-get install -y python3   macOS: brew install python3\n',
    );
    process.exit(2);
  }
}
