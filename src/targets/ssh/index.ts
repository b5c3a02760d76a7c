/**
 * Entry point for the CLI: `--host ALIAS [--ssh-config FILE] [--accept-new]` → a connected
 * SshTarget. Failures are SshError (kind 'config' → exit 2; others → 3) or HostKeyError (exit 3).
 */

import type { AskPassphrase } from './auth.js';
import { type LinkStatus, SshConnection, type SshConnectionOptions } from './connection.js';
import { resolveHost } from './ssh-config.js';
import { SshTarget, type SshTargetOptions } from './ssh-target.js';

export { CommandTimeoutError, HostKeyError, isConnectionFailure, SshError } from './errors.js';
export { SshTarget };

export interface ConnectSshTargetOptions extends SshTargetOptions {
  /** --host: an ssh config alias, `host`, `user@host` or `user@host:port` */
  host: string;
  /** --ssh-config FILE (default ~/.ssh/config) */
  sshConfig?: string;
  /** --accept-new (also implied by StrictHostKeyChecking accept-new/no in the config) */
  acceptNew?: boolean;
  /** asked for an encrypted key's passphrase; the answer stays in memory only */
  askPassphrase?: AskPassphrase;
  /** link state changes, for the UI's outage display */
  onState?: (s: LinkStatus) => void;
  onHostKeyAdded?: SshConnectionOptions['onHostKeyAdded'];
  /** overrides for tests */
  home?: string;
  connection?: Partial<Omit<SshConnectionOptions, 'host'>>;
}

export async function connectSshTarget(o: ConnectSshTargetOptions): Promise<SshTarget> {
  const host = resolveHost(o.host, { configPath: o.sshConfig, home: o.home });
  const strict = host.strictHostKeyChecking;
  const acceptNew = o.acceptNew === true || strict === 'accept-new' || strict === 'no' || strict === 'off';
  const conn = new SshConnection({
    ...o.connection,
    host,
    acceptNew,
    ...(o.askPassphrase ? { askPassphrase: o.askPassphrase } : {}),
    ...(o.onHostKeyAdded ? { onHostKeyAdded: o.onHostKeyAdded } : {}),
  });
  if (o.onState) conn.onState(o.onState);
  await conn.connect();
  return new SshTarget(conn, { downTimeoutMs: o.downTimeoutMs });
}
