/**
 * One SSH connection per target, multiplexing every channel (PTY, execs, SFTP tails, GPU poll).
 * Keepalives detect a dead link; a dropped link is redialled with capped exponential backoff and
 * jitter while listeners see the outage ('down' → 'reconnecting' → 'up'). A host-key failure while
 * redialling is fatal: a changed key is never accepted silently.
 */

import type { Client, SFTPWrapper } from 'ssh2';
import { debugLog } from '../../util/debug-log.js';
import type { AskPassphrase } from './auth.js';
import { type DialOptions, dialChain } from './dial.js';
import { HostKeyError, SftpUnavailable, SshError } from './errors.js';
import { type HostSpec, hostLabel } from './ssh-config.js';

export type LinkState = 'connecting' | 'up' | 'down' | 'reconnecting' | 'closed';

export interface LinkStatus {
  state: LinkState;
  /** ms epoch when this state (for down/reconnecting: the outage) began */
  since: number;
  /** reconnect attempts made in the current outage */
  attempts: number;
  /** last error seen, for the UI */
  error?: string;
}

export interface SshConnectionOptions {
  host: HostSpec;
  /** StrictHostKeyChecking=accept-new: add unknown host keys to known_hosts */
  acceptNew?: boolean;
  askPassphrase?: AskPassphrase;
  /** agent socket override (null: no agent); default IdentityAgent, else $SSH_AUTH_SOCK */
  agentSocket?: string | null;
  backoff?: { initialMs?: number; maxMs?: number };
  onHostKeyAdded?: DialOptions['onHostKeyAdded'];
}

/** Thrown from a withClient callback to stop the retry (the command may already have run). */
export class NoRetry extends Error {
  constructor(readonly error: Error) {
    super(error.message);
  }
}

export class SshConnection {
  readonly host: HostSpec;
  readonly label: string;
  private readonly dialOpts: DialOptions;
  private readonly backoff: { initialMs: number; maxMs: number };
  private clients: Client[] = [];
  private status: LinkStatus;
  /** the error that ended the connection for good (host key changed while reconnecting, ...) */
  private fatal: Error | null = null;
  private closing = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly sftpByClient = new WeakMap<Client, Promise<SFTPWrapper>>();
  private readonly listeners = new Set<(s: LinkStatus) => void>();
  private readonly waiters = new Set<{ resolve: (c: Client) => void; reject: (e: Error) => void }>();

  constructor(opts: SshConnectionOptions) {
    this.host = opts.host;
    this.label = hostLabel(opts.host);
    this.backoff = { initialMs: opts.backoff?.initialMs ?? 500, maxMs: opts.backoff?.maxMs ?? 8000 };
    const aliveSec = opts.host.serverAliveIntervalSec;
    this.dialOpts = {
      acceptNew: opts.acceptNew ?? false,
      passphrases: new Map(),
      // ServerAliveInterval, else 5 s; ServerAliveCountMax; ConnectTimeout, else 20 s
      keepaliveIntervalMs: aliveSec ? aliveSec * 1000 : 5000,
      keepaliveCountMax: opts.host.serverAliveCountMax,
      readyTimeoutMs: opts.host.connectTimeoutSec ? opts.host.connectTimeoutSec * 1000 : 20_000,
      ...(opts.askPassphrase ? { askPassphrase: opts.askPassphrase } : {}),
      ...(opts.agentSocket !== undefined ? { agentSocket: opts.agentSocket } : {}),
      ...(opts.onHostKeyAdded ? { onHostKeyAdded: opts.onHostKeyAdded } : {}),
    };
    this.status = { state: 'connecting', since: Date.now(), attempts: 0 };
  }

  get state(): LinkStatus {
    return { ...this.status };
  }

  /** Subscribe to link state changes; returns an unsubscribe function. */
  onState(cb: (s: LinkStatus) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** First connection. Rejects with SshError / HostKeyError and does not retry. */
  async connect(): Promise<void> {
    if (this.status.state === 'up') return;
    try {
      this.attach(await dialChain(this.host, this.dialOpts));
    } catch (err) {
      this.fatal = err as Error;
      this.setStatus({ state: 'closed', since: Date.now(), attempts: 0, error: (err as Error).message });
      throw err;
    }
  }

  /** The live client, waiting up to timeoutMs for a reconnect; rejects SshError 'down' after that. */
  client(timeoutMs = 20_000): Promise<Client> {
    const live = this.clients[this.clients.length - 1];
    if (this.status.state === 'up' && live) return Promise.resolve(live);
    if (this.status.state === 'closed') return Promise.reject(this.closedError());
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (c: Client) => {
          clearTimeout(timer);
          resolve(c);
        },
        reject: (e: Error) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(
          new SshError(
            'down',
            `connection to ${this.label} is down (waited ${Math.round(timeoutMs / 1000)} s)`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /**
   * Run fn on the live client. When the link drops under it, fn runs again on the next link, until
   * timeoutMs has passed; so fn must be safe to repeat, or throw `new NoRetry(err)` once it is not
   * (a command that may have started).
   */
  async withClient<T>(fn: (client: Client) => Promise<T>, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const client = await this.client(Math.max(1, deadline - Date.now()));
      let off = () => {};
      // a request on a link that just died may never be answered: give it up when the link goes, so
      // the retry on the new link starts (a mirror once stood still 10 s after a cut)
      const lost = new Promise<never>((_, reject) => {
        off = this.onState(() => {
          if (!this.isCurrent(client)) reject(new SshError('down', `connection to ${this.label} lost`));
        });
      });
      lost.catch(() => undefined);
      try {
        return await Promise.race([fn(client), lost]);
      } catch (err) {
        if (err instanceof NoRetry) throw err.error;
        if (this.isCurrent(client)) throw err; // a real failure, not a lost link
        if (this.status.state === 'closed') throw this.closedError();
        if (Date.now() >= deadline) {
          throw new SshError('down', `connection to ${this.label} lost: ${(err as Error).message}`, {
            cause: err,
          });
        }
      } finally {
        off();
      }
    }
  }

  /** whether client is the live, up client (false once its link dropped) */
  isCurrent(client: Client): boolean {
    return this.status.state === 'up' && this.clients[this.clients.length - 1] === client;
  }

  /** The SFTP session of a client's link (one per link, opened on first use). */
  sftpFor(client: Client): Promise<SFTPWrapper> {
    let p = this.sftpByClient.get(client);
    if (!p) {
      const forget = () => {
        if (this.sftpByClient.get(client) === opening) this.sftpByClient.delete(client);
      };
      const opening = new Promise<SFTPWrapper>((resolve, reject) => {
        client.sftp((err, sftp) => {
          if (err) {
            // the server refused the subsystem itself (no `Subsystem sftp` line): that is final
            if (/unable to start subsystem/i.test(err.message))
              return reject(new SftpUnavailable(this.label, err.message));
            return reject(new SshError('connect', `cannot open SFTP on ${this.label}: ${err.message}`));
          }
          sftp.on('close', forget);
          resolve(sftp);
        });
      });
      opening.catch(forget);
      this.sftpByClient.set(client, opening);
      p = opening;
    }
    return p;
  }

  /** Run fn with the SFTP session of the live link, retried on a new link like withClient. */
  withSftp<T>(fn: (sftp: SFTPWrapper) => Promise<T>, timeoutMs = 20_000): Promise<T> {
    return this.withClient(async (client) => fn(await this.sftpFor(client)), timeoutMs);
  }

  /** Whether the link is up right now. */
  get isUp(): boolean {
    return this.status.state === 'up';
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const clients = this.clients;
    this.clients = [];
    for (const c of [...clients].reverse()) c.end();
    this.setStatus({ state: 'closed', since: Date.now(), attempts: 0 });
    for (const w of this.waiters) w.reject(this.closedError());
    this.waiters.clear();
  }

  private closedError(): Error {
    return this.fatal ?? new SshError('closed', `connection to ${this.label} is closed`);
  }

  private attach(clients: Client[]): void {
    if (this.closing) {
      for (const c of clients) c.end();
      return;
    }
    this.clients = clients;
    this.fatal = null; // a later successful connect() supersedes an earlier failure
    const target = clients[clients.length - 1]!;
    let dropped = false;
    const onDrop = (err?: Error) => {
      if (dropped || this.clients !== clients) return;
      dropped = true;
      this.clients = [];
      for (const c of [...clients].reverse()) c.end();
      if (!this.closing) this.startReconnect(err);
    };
    // errors after setup (keepalive timeout, socket reset) end in 'close'; the listeners keep
    // ssh2 from throwing them as unhandled 'error' events
    for (const c of clients) {
      c.on('error', (err: Error) => onDrop(err));
      c.on('close', () => onDrop());
    }
    this.setStatus({ state: 'up', since: Date.now(), attempts: 0 });
    for (const w of this.waiters) w.resolve(target);
    this.waiters.clear();
  }

  private startReconnect(err?: Error): void {
    const since = Date.now();
    this.setStatus({ state: 'down', since, attempts: 0, ...(err ? { error: err.message } : {}) });
    this.scheduleAttempt(since, 1);
  }

  private delayFor(attempt: number): number {
    const base = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** (attempt - 1));
    return Math.round(base * (0.75 + 0.5 * Math.random()));
  }

  private scheduleAttempt(since: number, attempt: number): void {
    this.retryTimer = setTimeout(async () => {
      this.retryTimer = null;
      if (this.closing) return;
      this.setStatus({ ...this.status, state: 'reconnecting', since, attempts: attempt });
      try {
        this.attach(await dialChain(this.host, this.dialOpts));
      } catch (err) {
        if (this.closing) return;
        if (err instanceof HostKeyError || (err instanceof SshError && err.kind === 'config')) {
          this.fatal = err;
          this.setStatus({ state: 'closed', since: Date.now(), attempts: attempt, error: err.message });
          for (const w of this.waiters) w.reject(err);
          this.waiters.clear();
          return;
        }
        this.setStatus({ state: 'down', since, attempts: attempt, error: (err as Error).message });
        this.scheduleAttempt(since, attempt + 1);
      }
    }, this.delayFor(attempt));
  }

  private setStatus(s: LinkStatus): void {
    // a link that drops while the dashboard is away (the run's terminal opening) leaves no trace on
    // the screen: the engine log has it
    if (s.state !== this.status.state)
      debugLog(`ssh ${this.label}: ${s.state}${s.error ? ` (${s.error})` : ''}`);
    this.status = s;
    for (const cb of this.listeners) {
      try {
        cb({ ...s });
      } catch {
        // a faulty listener must not break the connection logic
      }
    }
  }
}
