/**
 * Typed failures of the SSH layer. The CLI maps them to exit codes without parsing messages:
 * configuration problems are usage errors (2), everything about reaching or trusting the box is 3.
 */

export type SshErrorKind = 'config' | 'connect' | 'auth' | 'timeout' | 'down' | 'closed';

export class SshError extends Error {
  readonly kind: SshErrorKind;
  /** exit code the CLI should use when this error ends the process */
  readonly exitCode: 2 | 3;
  constructor(kind: SshErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SshError';
    this.kind = kind;
    this.exitCode = kind === 'config' ? 2 : 3;
  }
}

export type HostKeyErrorKind = 'unknown' | 'changed' | 'revoked' | 'unreadable';

/** The host key could not be trusted. Never retried: a changed key must not be silently accepted. */
export class HostKeyError extends Error {
  readonly kind: HostKeyErrorKind;
  readonly exitCode = 3 as const;
  readonly host: string;
  readonly port: number;
  /** `SHA256:...` of the key the server presented */
  readonly fingerprint: string;
  readonly keyType: string;
  /** the known_hosts file consulted (the first one, where --accept-new would write) */
  readonly file: string;
  constructor(
    init: Pick<HostKeyError, 'kind' | 'host' | 'port' | 'fingerprint' | 'keyType' | 'file'> & {
      message: string;
      cause?: unknown;
    },
  ) {
    super(init.message, { cause: init.cause });
    this.name = 'HostKeyError';
    this.kind = init.kind;
    this.host = init.host;
    this.port = init.port;
    this.fingerprint = init.fingerprint;
    this.keyType = init.keyType;
    this.file = init.file;
  }
}

/** A command on the target ran past its timeoutMs; the link itself may be fine. */
export class CommandTimeoutError extends Error {
  readonly kind = 'command-timeout' as const;
  constructor(
    readonly command: string,
    readonly timeoutMs: number,
  ) {
    super(`command timed out after ${timeoutMs} ms: ${command}`);
    this.name = 'CommandTimeoutError';
  }
}

/**
 * The box's sshd has no `sftp` subsystem (hardened servers, some containers). Not a failure of the
 * box: the target moves its file operations to exec channels on the same connection.
 */
export class SftpUnavailable extends Error {
  constructor(label: string, reason: string) {
    super(`no SFTP on ${label}: ${reason}`);
    this.name = 'SftpUnavailable';
  }
}

/** Whether err is a connection or host-key failure (CLI exit code 3). */
export function isConnectionFailure(err: unknown): boolean {
  return err instanceof HostKeyError || (err instanceof SshError && err.exitCode === 3);
}
