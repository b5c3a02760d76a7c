import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSshd, type TestSshd } from './sshd.js';

/** Two real sshd's on 127.0.0.1 (two ports, two host keys, both trusted) as hosts `node-a` and `node-b`. */
export interface TwoHosts {
  a: TestSshd;
  b: TestSshd;
  /** one ssh config naming both hosts */
  sshConfig: string;
  stop(): Promise<void>;
}

export async function startTwoHosts(dir: string): Promise<TwoHosts> {
  const [a, b] = await Promise.all([startSshd(), startSshd()]);
  a.trustHostKey();
  b.trustHostKey();
  const host = (alias: string, s: TestSshd) =>
    [
      `Host ${alias}`,
      '  HostName 127.0.0.1',
      `  Port ${s.port}`,
      `  User ${s.user}`,
      `  IdentityFile ${s.userKey}`,
      `  UserKnownHostsFile ${s.knownHostsPath}`,
      '',
    ].join('\n');
  const sshConfig = join(dir, 'ssh_config');
  writeFileSync(sshConfig, host('node-a', a) + host('node-b', b));
  return { a, b, sshConfig, stop: async () => void (await Promise.all([a.stop(), b.stop()])) };
}
