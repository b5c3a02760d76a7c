// A verdict's JSON at many ranks is over 200 KB. Printed with process.exit() right after the write,
// a pipe took 64 KB and the rest was lost (`nsa-dbg run --headless --json … | jq` failed at 256
// ranks). exitAfter exits once the bytes are out: checked through a real pipe whose reader is slow,
// beside the plain write + exit that loses them.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const BUILT = join(import.meta.dirname, '..', '..', 'dist', 'src', 'cli', 'exit-after.js');

function slowRead(script: string): Promise<{ bytes: number; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let bytes = 0;
    child.stdout.pause();
    // the reader starts late: the writer's exit comes while the pipe is full
    setTimeout(() => child.stdout.resume(), 500);
    child.stdout.on('data', (b: Buffer) => (bytes += b.length));
    child.on('close', (code) => resolve({ bytes, code }));
  });
}

describe('exitAfter', () => {
  it('every byte of 1 MB reaches a slow pipe, then the exit status', async () => {
    const r = await slowRead(
      `const { exitAfter } = await import(${JSON.stringify(BUILT)}); await exitAfter('x'.repeat(1000000) + '\\n', 3);`,
    );
    expect(r).toEqual({ bytes: 1_000_001, code: 3 });
  });

  it('(the plain write and exit it replaced loses them)', async () => {
    const r = await slowRead(`process.stdout.write('x'.repeat(1000000) + '\\n'); process.exit(3);`);
    expect(r.code).toBe(3);
    expect(r.bytes).toBeLessThan(1_000_001);
  });
});
