/**
 * A real OpenSSH sshd for integration tests: 127.0.0.1, a free high port, a throwaway host key and
 * user key, running as the current user (root in CI, any user locally). Also writes a temp ssh
 * config with Host aliases and a temp known_hosts, can start an ssh-agent holding the user key, and
 * can cut live connections by SIGKILLing the per-connection sshd processes (the listener stays up).
 */

import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { freePort } from './ports.js';
import { waitUntil } from './wait.js';

const SSHD = '/usr/sbin/sshd';
const SFTP_SERVER = '/usr/lib/openssh/sftp-server';

export interface TestSshd {
  dir: string;
  port: number;
  user: string;
  hostKeyPub: string;
  userKey: string;
  /** ssh config with aliases `target` (key file) and `agent-only` (no key file) */
  configPath: string;
  knownHostsPath: string;
  /** ssh-keygen -lf's SHA256 fingerprint of the current host key */
  hostFingerprint(): string;
  /** add the host key to known_hosts as `[127.0.0.1]:PORT` (hashed with ssh-keygen -H if asked) */
  trustHostKey(opts?: { hashed?: boolean; name?: string }): void;
  /** append text to the ssh config (extra aliases for a test) */
  addConfig(text: string): void;
  /** authorize another public key */
  authorize(pubKeyPath: string): void;
  /** start ssh-agent holding the user key; returns its socket */
  startAgent(): Promise<string>;
  /** SIGKILL the per-connection sshd processes; returns how many were killed */
  killSessions(): number;
  /** cut sessions and stop the listener: the box is unreachable until startListener() */
  stopListener(): Promise<void>;
  startListener(): Promise<void>;
  /** cut sessions, stop the listener, make a new host key, start again on the same port */
  restartWithNewHostKey(): Promise<void>;
  stop(): Promise<void>;
  /** the last `lines` lines sshd logged (its LogLevel: SshdOptions.logLevel) */
  logTail(lines: number): string;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

function keygen(path: string, passphrase = ''): void {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', 'nsa-dbg-test', '-f', path]);
}

/** pid → parent pid for every process, from /proc */
function processTree(): Map<number, number> {
  const tree = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      tree.set(Number(entry), ppid);
    } catch {
      // exited meanwhile
    }
  }
  return tree;
}

function commOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Make a new key pair (optionally passphrase-protected) in dir; returns the private key path. */
export function makeUserKey(dir: string, name: string, passphrase = ''): string {
  const path = join(dir, name);
  keygen(path, passphrase);
  return path;
}

export interface SshdOptions {
  /** false: no `Subsystem sftp` line, like hardened servers and some containers */
  sftp?: boolean;
  /** more variables for every session (a login node's SLURM_CONF) */
  env?: Record<string, string>;
  /** sshd's LogLevel (ERROR unless asked: DEBUG1 logs each channel's requests, for a test's failure) */
  logLevel?: string;
}

/** how much of sshd's log is kept for logTail() */
const LOG_KEPT_CHARS = 512 * 1024;

export async function startSshd(opts: SshdOptions = {}): Promise<TestSshd> {
  if (!existsSync(SSHD)) throw new Error('sshd not found: apt-get install -y openssh-server');
  const user = userInfo().username;
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true }); // privilege separation dir
  const dir = mkdtempSync(join(tmpdir(), 'nsa-sshd-'));
  const hostKey = join(dir, 'hostkey');
  const userKey = join(dir, 'userkey');
  keygen(hostKey);
  keygen(userKey);
  const authorizedKeys = join(dir, 'authorized_keys');
  writeFileSync(authorizedKeys, readFileSync(`${userKey}.pub`), { mode: 0o600 });
  const port = await freePort();
  const sshdConfig = join(dir, 'sshd_config');
  const tmuxDir = join(dir, 'tmux');
  mkdirSync(tmuxDir, { mode: 0o700 });
  writeFileSync(
    sshdConfig,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${authorizedKeys}`,
      'StrictModes no',
      'UsePAM no',
      'PermitRootLogin yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'AllowTcpForwarding yes',
      'MaxStartups 100',
      'MaxSessions 30',
      `LogLevel ${opts.logLevel ?? 'ERROR'}`,
      ...(opts.sftp === false
        ? []
        : [`Subsystem sftp ${existsSync(SFTP_SERVER) ? SFTP_SERVER : 'internal-sftp'}`]),
      // detached runs go to a tmux server of this sshd's own, which stop() takes down with them
      // (one SetEnv line: sshd takes the first it reads)
      `SetEnv ${[`TMUX_TMPDIR=${tmuxDir}`, ...Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`)].join(' ')}`,
      '',
    ].join('\n'),
  );
  const knownHostsPath = join(dir, 'known_hosts');
  writeFileSync(knownHostsPath, '');
  const configPath = join(dir, 'ssh_config');
  writeFileSync(
    configPath,
    [
      'Host target',
      '  HostName 127.0.0.1',
      `  Port ${port}`,
      `  User ${user}`,
      `  IdentityFile ${userKey}`,
      `  UserKnownHostsFile ${knownHostsPath}`,
      '',
      'Host agent-only',
      '  HostName 127.0.0.1',
      `  Port ${port}`,
      `  User ${user}`,
      `  UserKnownHostsFile ${knownHostsPath}`,
      '',
    ].join('\n'),
  );

  let listener: ChildProcess | null = null;
  let stderr = '';
  const launch = async () => {
    stderr = '';
    const child = spawn(SSHD, ['-f', sshdConfig, '-D', '-e'], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.on('data', (b: Buffer) => {
      stderr += b.toString();
      if (stderr.length > 2 * LOG_KEPT_CHARS) stderr = stderr.slice(-LOG_KEPT_CHARS);
    });
    listener = child;
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`sshd exited (${child.exitCode}): ${stderr}`);
        return canConnect(port);
      },
      { timeoutMs: 10_000, what: `sshd listening on ${port}` },
    );
  };
  const halt = async () => {
    const child = listener;
    listener = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  await launch();

  const agents: ChildProcess[] = [];
  // a test that times out never reaches stop(): do not leave a listener or agent behind
  const killRuns = () =>
    spawnSync('tmux', ['kill-server'], { env: { ...process.env, TMUX_TMPDIR: tmuxDir }, stdio: 'ignore' });
  const onExit = () => {
    killRuns();
    (listener as ChildProcess | null)?.kill('SIGKILL');
    for (const a of agents) a.kill('SIGKILL');
  };
  process.once('exit', onExit);
  const sshd: TestSshd = {
    dir,
    port,
    user,
    hostKeyPub: `${hostKey}.pub`,
    userKey,
    configPath,
    knownHostsPath,
    hostFingerprint: () =>
      execFileSync('ssh-keygen', ['-lf', `${hostKey}.pub`])
        .toString()
        .split(/\s+/)[1]!,
    trustHostKey: (opts = {}) => {
      const [type, b64] = readFileSync(`${hostKey}.pub`, 'utf8').trim().split(/\s+/);
      appendFileSync(knownHostsPath, `${opts.name ?? `[127.0.0.1]:${port}`} ${type} ${b64}\n`);
      if (opts.hashed) {
        execFileSync('ssh-keygen', ['-H', '-f', knownHostsPath], { stdio: 'ignore' });
        rmSync(`${knownHostsPath}.old`, { force: true });
      }
    },
    addConfig: (text) => appendFileSync(configPath, `\n${text}\n`),
    authorize: (pub) => appendFileSync(authorizedKeys, readFileSync(pub)),
    startAgent: async () => {
      const socket = join(dir, `agent-${agents.length}.sock`);
      const agent = spawn('ssh-agent', ['-D', '-a', socket], { stdio: 'ignore' });
      agents.push(agent);
      await waitUntil(() => existsSync(socket), { what: 'ssh-agent socket' });
      execFileSync('ssh-add', ['-q', userKey], {
        env: { ...process.env, SSH_AUTH_SOCK: socket },
        stdio: 'ignore',
      });
      return socket;
    },
    killSessions: () => {
      const root = listener?.pid;
      if (!root) return 0;
      const tree = processTree();
      const isDescendant = (pid: number): boolean => {
        for (let p = tree.get(pid); p !== undefined && p > 1; p = tree.get(p)) if (p === root) return true;
        return false;
      };
      let killed = 0;
      for (const pid of tree.keys()) {
        // only sshd's own processes: user programs started in a session are left alone
        if (pid !== root && commOf(pid) === 'sshd' && isDescendant(pid)) {
          try {
            process.kill(pid, 'SIGKILL');
            killed++;
          } catch {
            // already gone
          }
        }
      }
      return killed;
    },
    stopListener: async () => {
      sshd.killSessions();
      await halt();
    },
    startListener: () => launch(),
    restartWithNewHostKey: async () => {
      sshd.killSessions(); // sessions outlive the listener; cut them so clients must redial
      await halt();
      rmSync(hostKey, { force: true });
      rmSync(`${hostKey}.pub`, { force: true });
      keygen(hostKey);
      await launch();
    },
    logTail: (lines) => {
      const all = stderr.trimEnd().split('\n');
      return all.slice(-lines).join('\n');
    },
    stop: async () => {
      process.removeListener('exit', onExit);
      // runs left detached by a test (or by a failed one) end with their tmux server
      killRuns();
      sshd.killSessions();
      await halt();
      for (const a of agents) a.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return sshd;
}

/**
 * One sshd for a test file, its host key trusted: started before the file's tests, stopped after
 * them together with the file's work folder (made here under the temp dir, named from `prefix`).
 */
export function sshdForFile(prefix: string): { work: string; readonly sshd: TestSshd } {
  const work = mkdtempSync(join(tmpdir(), prefix));
  let started: TestSshd | undefined;
  beforeAll(async () => {
    started = await startSshd();
    started.trustHostKey();
  });
  afterAll(async () => {
    await started?.stop();
    rmSync(work, { recursive: true, force: true });
  });
  return {
    work,
    get sshd() {
      if (started === undefined) throw new Error('the sshd is started in beforeAll');
      return started;
    },
  };
}
