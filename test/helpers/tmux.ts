import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitUntil } from './wait.js';

/**
 * Drives the real binary in a real tmux server (its own socket, so a user's tmux is untouched).
 * The app is started with CI unset: Ink draws nothing live when CI is set.
 */
let sessions = 0;

export class TmuxSession {
  private readonly socket: string;
  /** the app's engine log (NSA_DBG_LOG), when the test asked for one: its tail goes with a failure */
  private engineLog: string | null = null;
  constructor(
    readonly name: string,
    readonly cols: number,
    readonly rows: number,
  ) {
    // a socket per session, never reused: a test that reopens the app right after kill-server
    // would otherwise reach the old server while it exits ("server exited unexpectedly")
    this.socket = `nsa-e2e-${process.pid}-${name}-${++sessions}`;
  }

  static available(): boolean {
    return spawnSync('tmux', ['-V']).status === 0;
  }

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  /**
   * `config`: tmux.conf lines for this server, read before the pane starts (options such as
   * `set -g set-clipboard on` must hold before the app's first byte arrives).
   */
  start(command: string, env: Record<string, string> = {}, config: string[] = []): void {
    this.engineLog = env.NSA_DBG_LOG ?? null;
    // Under a locale that is not UTF-8 the dashboard draws ASCII only; the tests read its glyphs.
    const exports = Object.entries({ LC_ALL: 'C.UTF-8', ...env })
      .map(([k, v]) => `export ${k}='${v.replace(/'/g, `'\\''`)}';`)
      .join(' ');
    // `; echo` keeps the pane around after the app exits so the final screen can be read
    const shell = `unset CI CONTINUOUS_INTEGRATION; ${exports} ${command}; echo "[app exited $?]"; sleep 600`;
    let conf = '/dev/null';
    if (config.length > 0) {
      conf = join(mkdtempSync(join(tmpdir(), 'nsa-tmux-')), 'tmux.conf');
      writeFileSync(conf, `${config.join('\n')}\n`);
    }
    // -u: the pane is UTF-8 whatever this process's locale, so what the app draws is what is read
    this.tmux(
      '-u',
      '-f',
      conf,
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

  /** A format of the pane, e.g. `#{pane_title}`, `#{cursor_flag}`, `#{alternate_on}`, `#{pane_pid}`. */
  display(format: string): string {
    return this.tmux('display-message', '-p', '-t', this.name, format).trimEnd();
  }

  /** The names of the server's paste buffers (an OSC 52 clipboard write lands here when allowed). */
  buffers(): string[] {
    return this.tmux('list-buffers', '-F', '#{buffer_name}')
      .split('\n')
      .filter((l) => l !== '');
  }

  screen(): string {
    return this.tmux('capture-pane', '-p', '-t', this.name);
  }

  /** more to show when a wait fails (the test's sshd log: what the box did meanwhile) */
  alsoOnFailure: (() => string) | null = null;

  /** the last lines of the engine log: what the app was doing while the screen showed `last` */
  private engineLogTail(): string {
    if (this.engineLog === null || !existsSync(this.engineLog)) return '';
    const lines = readFileSync(this.engineLog, 'utf8').trimEnd().split('\n');
    return `\n--- engine log (last 60 of ${lines.length} lines) ---\n${lines.slice(-60).join('\n')}`;
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
      const also = this.alsoOnFailure === null ? '' : `\n--- also ---\n${this.alsoOnFailure()}`;
      throw new Error(`${(e as Error).message}\n--- screen ---\n${last}${this.engineLogTail()}${also}`);
    }
  }

  kill(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
  }
}
