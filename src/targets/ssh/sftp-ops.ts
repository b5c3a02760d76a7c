/**
 * Promise wrappers over the SFTP calls the target needs. SFTP does not expand `~`, but its working
 * directory is the login user's home, so `~/x` becomes the relative path `x`.
 */

import type { SFTPWrapper, Stats } from 'ssh2';

/** SFTP status code for "no such file" */
const SFTP_NO_SUCH_FILE = 2;

export function sftpPath(path: string): string {
  if (path === '~') return '.';
  if (path.startsWith('~/')) return path.slice(2) || '.';
  return path;
}

export function isNoSuchFile(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === SFTP_NO_SUCH_FILE || code === 'ENOENT';
}

/** one SFTP call, whose "no such file" answers `missing` */
function orMissing<T>(missing: T, call: (done: (err: unknown, value?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) =>
    call((err, value) => (err ? (isNoSuchFile(err) ? resolve(missing) : reject(err)) : resolve(value as T))),
  );
}

export function sftpStat(sftp: SFTPWrapper, path: string): Promise<Stats | null> {
  return orMissing<Stats | null>(null, (done) => sftp.stat(sftpPath(path), done));
}

export function sftpReadFile(sftp: SFTPWrapper, path: string): Promise<Buffer | null> {
  return orMissing<Buffer | null>(null, (done) => sftp.readFile(sftpPath(path), done));
}

export function sftpWriteFile(sftp: SFTPWrapper, path: string, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    sftp.writeFile(sftpPath(path), data, (err) => (err ? reject(err) : resolve()));
  });
}

/** rename over an existing file (OpenSSH's posix-rename extension; plain SFTP rename refuses) */
export function sftpReplace(sftp: SFTPWrapper, from: string, to: string): Promise<void> {
  return new Promise((resolve, reject) => {
    sftp.ext_openssh_rename(sftpPath(from), sftpPath(to), (err) => (err ? reject(err) : resolve()));
  });
}

export function sftpUnlink(sftp: SFTPWrapper, path: string): Promise<void> {
  return new Promise((resolve) => sftp.unlink(sftpPath(path), () => resolve()));
}

export function sftpReaddir(sftp: SFTPWrapper, path: string): Promise<string[]> {
  return orMissing<string[]>([], (done) =>
    sftp.readdir(sftpPath(path), (err, list) =>
      done(err, err ? undefined : list.map((e) => e.filename).filter((n) => n !== '.' && n !== '..')),
    ),
  );
}

/**
 * Read bytes [from, to) of a file in order, handing each piece to onPiece as soon as it arrives.
 * Stops early (without error) at end of file.
 */
export function sftpReadRange(
  sftp: SFTPWrapper,
  path: string,
  from: number,
  to: number,
  onPiece: (piece: Buffer) => void,
  pieceSize = 32 * 1024,
): Promise<void> {
  return new Promise((resolve, reject) => {
    sftp.open(sftpPath(path), 'r', (err, handle) => {
      if (err) return isNoSuchFile(err) ? resolve() : reject(err);
      let pos = from;
      const finish = (e?: Error | null) => sftp.close(handle, () => (e ? reject(e) : resolve()));
      const next = () => {
        if (pos >= to) return finish();
        const len = Math.min(pieceSize, to - pos);
        sftp.read(handle, Buffer.alloc(len), 0, len, pos, (readErr, bytesRead, buf) => {
          if (readErr) return finish(readErr);
          if (bytesRead <= 0) return finish();
          pos += bytesRead;
          try {
            onPiece(Buffer.from(buf.subarray(0, bytesRead)));
          } catch (cbErr) {
            return finish(cbErr as Error);
          }
          next();
        });
      };
      next();
    });
  });
}
