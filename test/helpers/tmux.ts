import { execFileSync, spawnSync } from 'node:child_process';
import { waitUntil } from './wait.js';

/**
 * Drives the real binary in a real tmux server (its own socket, so a user's tmux is untouched).
 * The app is started with CI unset: Ink draws nothing live when CI is set.
 */
export class TmuxSession {
  private readonly socket: string;
  constructor(
    readonly name: string,
    readonly cols: number,
    readonly rows: number,
  ) {
    this.socket = `nsa-e2e-${process.pid}-${name}`;
  }

  static available(): boolean {
    return spawnSync('tmux', ['-V']).status === 0;
  }

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  start(command: string, env: Record<string, string> = {}): void {
    const exports = Object.entries(env)
      .map(([k, v]) => `export ${k}='${v.replace(/'/g, `'\\''`)}';`)
      .join(' ');
    // `; echo` keeps the pane around after the app exits so the final screen can be read
    const shell = `unset CI CONTINUOUS_INTEGRATION; ${exports} ${command}; echo "[app exited $?]"; sleep 600`;
    this.tmux(
      '-f',
      '/dev/null',
      'new-session',
      '-d',
      '-s',
      this.name,
      '-x',
      String(this.cols),
      '-y',
      String(this.rows),
      shell,
    );
  }

  screen(): string {
    return this.tmux('capture-pane', '-p', '-t', this.name);
  }

  /** one key per call so Ink sees separate inputs */
  key(k: string): void {
    this.tmux('send-keys', '-t', this.name, k);
  }

  type(text: string): void {
    this.tmux('send-keys', '-t', this.name, '-l', text);
  }

  async waitFor(pred: (screen: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
    let last = '';
    try {
      return await waitUntil(
        () => {
          last = this.screen();
          return pred(last) ? last : null;
        },
        { timeoutMs, intervalMs: 100, what },
      );
    } catch (e) {
      throw new Error(`${(e as Error).message}\n--- screen ---\n${last}`);
    }
  }

  kill(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
  }
}
