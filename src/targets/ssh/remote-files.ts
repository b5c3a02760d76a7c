/**
 * File access on the box: SFTP when the server offers it, else plain commands on exec channels of
 * the same connection (`cat`, `tail -c +N`, a `for` over the folder). Both hand over raw bytes in
 * file order, so tails and the evidence mirror stay byte-exact either way.
 */

import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { debugLog } from '../../util/debug-log.js';
import type { CommandShells } from './command-shells.js';
import type { SshConnection } from './connection.js';
import { SftpUnavailable } from './errors.js';
import { ExecFiles, type Limit } from './exec-files.js';
import {
  isNoSuchFile,
  sftpReaddir,
  sftpReadFile,
  sftpReadRange,
  sftpReplace,
  sftpStat,
  sftpUnlink,
  sftpWriteFile,
} from './sftp-ops.js';

export interface RemoteFiles {
  /** null when the file does not exist */
  readFile(path: string): Promise<Buffer | null>;
  /** atomic: a temp file beside it, renamed over it; parent folders are created */
  writeFile(path: string, data: Buffer): Promise<void>;
  /** names in the folder ([] when it does not exist) */
  listDir(path: string): Promise<string[]>;
  /**
   * Hand every byte of a regular file from `offset` to its current end to onPiece, in order (a
   * missing file or one no longer than offset gives nothing). Waits up to linkWaitMs for a down link.
   */
  readFrom(path: string, offset: number, onPiece: (piece: Buffer) => void, linkWaitMs: number): Promise<void>;
}

class SftpFiles implements RemoteFiles {
  constructor(
    private readonly conn: SshConnection,
    private readonly downTimeoutMs: number,
    private readonly mkdirp: (dir: string) => Promise<void>,
  ) {}

  readFile(path: string): Promise<Buffer | null> {
    return this.conn.withSftp((sftp) => sftpReadFile(sftp, path), this.downTimeoutMs);
  }

  async writeFile(path: string, data: Buffer): Promise<void> {
    const tmp = `${path}.tmp-${randomBytes(4).toString('hex')}`;
    const writeTmp = () => this.conn.withSftp((sftp) => sftpWriteFile(sftp, tmp, data), this.downTimeoutMs);
    try {
      await writeTmp();
    } catch (err) {
      if (!isNoSuchFile(err)) throw err;
      await this.mkdirp(posix.dirname(path));
      await writeTmp();
    }
    await this.conn.withSftp(async (sftp) => {
      try {
        await sftpReplace(sftp, tmp, path);
      } catch (err) {
        await sftpUnlink(sftp, tmp);
        throw err;
      }
    }, this.downTimeoutMs);
  }

  listDir(path: string): Promise<string[]> {
    return this.conn.withSftp((sftp) => sftpReaddir(sftp, path), this.downTimeoutMs);
  }

  readFrom(
    path: string,
    offset: number,
    onPiece: (piece: Buffer) => void,
    linkWaitMs: number,
  ): Promise<void> {
    // a retry after a lost link starts again from the offset actually delivered
    let pos = offset;
    return this.conn.withSftp(async (sftp) => {
      const stats = await sftpStat(sftp, path);
      if (!stats?.isFile() || stats.size <= pos) return;
      await sftpReadRange(sftp, path, pos, stats.size, (piece) => {
        pos += piece.length;
        onPiece(piece);
      });
    }, linkWaitMs);
  }
}

/**
 * SFTP first; the first time the server refuses the subsystem, every operation (this one included)
 * moves to exec channels for the rest of the connection.
 */
export class FilesOverSsh implements RemoteFiles {
  private readonly sftp: SftpFiles;
  private readonly exec: ExecFiles;
  private useExec = false;

  constructor(
    conn: SshConnection,
    downTimeoutMs: number,
    mkdirp: (dir: string) => Promise<void>,
    limit: Limit,
    shells: CommandShells,
  ) {
    this.sftp = new SftpFiles(conn, downTimeoutMs, mkdirp);
    this.exec = new ExecFiles(conn, downTimeoutMs, limit, shells);
  }

  /** which transport the file operations use now */
  get via(): 'sftp' | 'exec' {
    return this.useExec ? 'exec' : 'sftp';
  }

  /**
   * The shortest wait between two looks at an idle file: over exec each look starts a process on
   * the box (a shell and `tail`), over SFTP it is one request on an open channel.
   */
  get minPollMs(): number {
    return this.useExec ? 1000 : 0;
  }

  private async use<T>(op: (f: RemoteFiles) => Promise<T>): Promise<T> {
    if (this.useExec) return op(this.exec);
    try {
      return await op(this.sftp);
    } catch (err) {
      if (!(err instanceof SftpUnavailable)) throw err;
      if (!this.useExec) debugLog(`${err.message}; files go over exec channels`);
      this.useExec = true;
      return op(this.exec);
    }
  }

  readFile(path: string): Promise<Buffer | null> {
    return this.use((f) => f.readFile(path));
  }

  writeFile(path: string, data: Buffer): Promise<void> {
    return this.use((f) => f.writeFile(path, data));
  }

  listDir(path: string): Promise<string[]> {
    return this.use((f) => f.listDir(path));
  }

  readFrom(
    path: string,
    offset: number,
    onPiece: (piece: Buffer) => void,
    linkWaitMs: number,
  ): Promise<void> {
    // SFTP refuses before any byte is read, so the exec retry starts from the same offset
    return this.use((f) => f.readFrom(path, offset, onPiece, linkWaitMs));
  }
}
