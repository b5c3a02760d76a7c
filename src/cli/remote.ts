import type { Argv } from 'yargs';
import type { LinkView } from '../session/session-options.js';
import type { SshTarget } from '../targets/ssh/index.js';

export interface HostArgs {
  host?: string;
  'ssh-config'?: string;
  'accept-new'?: boolean;
}

export function withHostOptions<T>(y: Argv<T>): Argv<T & HostArgs> {
  return y
    .option('host', {
      type: 'string',
      describe: 'GPU box: an ~/.ssh/config alias, host, user@host or user@host:port',
    })
    .option('ssh-config', { type: 'string', describe: 'ssh config file (default ~/.ssh/config)' })
    .option('accept-new', {
      type: 'boolean',
      describe: 'trust an unknown host key and add it to known_hosts (like StrictHostKeyChecking=accept-new)',
    }) as Argv<T & HostArgs>;
}

/** Ask for a key's passphrase on the terminal without echo; it is kept in memory only. */
function askPassphrase(keyPath: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    return Promise.reject(
      new Error(`${keyPath} is encrypted and there is no terminal to ask: load it into ssh-agent`),
    );
  }
  process.stderr.write(`Passphrase for ${keyPath}: `);
  return new Promise((resolve) => {
    let buf = '';
    stdin.setRawMode(true);
    stdin.resume();
    const onData = (d: Buffer) => {
      for (const ch of d.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          stdin.off('data', onData);
          stdin.setRawMode(false);
          stdin.pause();
          process.stderr.write('\n');
          resolve(buf);
          return;
        }
        if (ch === '\u0003') process.exit(130);
        if (ch === '\u007f') buf = buf.slice(0, -1);
        else buf += ch;
      }
    };
    stdin.on('data', onData);
  });
}

export class ConnectFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/**
 * Connect for --host. Host-key and connection failures exit 3 (the message says which), config
 * errors 2, as the headless contract promises.
 */
export async function connectFromArgs(
  a: HostArgs,
  /** the link's state as it changes */
  onLink?: (v: LinkView) => void,
): Promise<SshTarget> {
  // ssh2 (with its WebAssembly crypto, ~14 MB resident) is loaded only for a run on a box
  const { connectSshTarget, HostKeyError, isConnectionFailure } = await import('../targets/ssh/index.js');
  try {
    return await connectSshTarget({
      host: a.host!,
      ...(a['ssh-config'] ? { sshConfig: a['ssh-config'] } : {}),
      acceptNew: !!a['accept-new'],
      askPassphrase,
      onState: (s) => {
        const state =
          s.state === 'up'
            ? 'up'
            : s.state === 'reconnecting' || s.state === 'connecting'
              ? 'reconnecting'
              : 'down';
        onLink?.({ state, since: s.since, attempts: s.attempts });
      },
    });
  } catch (e) {
    const err = e as Error & { kind?: string; exitCode?: number };
    if (e instanceof HostKeyError) throw new ConnectFailure(`host key: ${err.message}`, 3);
    if (isConnectionFailure(e)) throw new ConnectFailure(`connection: ${err.message}`, 3);
    if (err.kind === 'config') throw new ConnectFailure(`ssh config: ${err.message}`, 2);
    throw e;
  }
}
