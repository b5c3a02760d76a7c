/**
 * Short commands through a shell that stays open on the box. Every exec channel makes sshd start
 * the login shell, and bash reads ~/.bashrc when sshd starts it; on GPU boxes that file runs
 * `conda init` or `pyenv init`: a second or more per command, several seconds when a few run at
 * once (seen: 16 s before a demo run's first line, 14 s of per-file checks after its last). A
 * command shell pays that once: one exec channel runs a small POSIX-sh loop that reads one request a
 * line, runs it with `sh` (no rc files), and answers with a framed reply. Commands run one at a
 * time per shell; a few shells run side by side (CommandShells).
 *
 * The wire, all bytes: request `ID SCRIPT [STDIN]\n`, the sh script and the bytes for its stdin with
 * every byte but [A-Za-z0-9_./-] written as `\0ooo` (read back by printf %b, so neither holds a
 * space or a newline);
 * `@@NSA-S ID\n` when the loop took the request (a link lost before it: the command never ran and
 * may be sent again), then the reply `@@NSA-R ID CODE OUTLEN ERRLEN\n` and exactly OUTLEN bytes of
 * stdout and ERRLEN of stderr.
 * Whatever the login shell prints before `@@NSA-READY PID` (a chatty .bashrc) is skipped.
 */

/** The loop run on the box. Each reply's files are new and removed after, so a process the command
 * left behind that still writes to its stdout cannot change a later reply; `head -c` sends exactly
 * the bytes counted. */
export const SHELL_LOOP = [
  'T=$(mktemp -d "${TMPDIR:-/tmp}/nsa-dbg-sh.XXXXXX") || exit 1',
  `trap 'rm -rf "$T"' EXIT`,
  `trap 'exit 1' HUP TERM`,
  `printf '@@NSA-READY %s\\n' "$$"`,
  `while IFS=' ' read -r id s d; do`,
  `  printf '@@NSA-S %s\\n' "$id"`,
  `  printf '%b' "$s" > "$T/s"; printf '%b' "$d" > "$T/i"`,
  `  sh "$T/s" > "$T/o.$id" 2> "$T/e.$id" < "$T/i"`,
  '  c=$?',
  `  set -- $(cd "$T" && wc -c o.$id e.$id)`,
  `  printf '@@NSA-R %s %s %s %s\\n' "$id" "$c" "$1" "$3"`,
  `  [ "$1" -eq 0 ] || head -c "$1" < "$T/o.$id"; [ "$3" -eq 0 ] || head -c "$3" < "$T/e.$id"`,
  `  [ $(($1 + $3)) -lt 4096 ] || rm -f "$T/o.$id" "$T/e.$id"`,
  `  case $id in *00) (cd "$T" && rm -f o.* e.*);; esac`,
  'done',
].join('\n');

const READY = Buffer.from('@@NSA-READY ');
const SAFE = /[A-Za-z0-9_./-]/;

/** bytes as one word for printf %b: every unsafe byte as `\0ooo` */
function escapeWord(bytes: Buffer): string {
  return Array.from(bytes, (byte) => {
    const ch = String.fromCharCode(byte);
    return byte < 128 && SAFE.test(ch) ? ch : `\\0${byte.toString(8).padStart(3, '0')}`;
  }).join('');
}

/** the most stdin a request carries; more takes an exec channel (the loop reads its line bytewise) */
export const MAX_SHELL_STDIN = 256 * 1024;

/** One request line: the id, the script, and the bytes for its stdin (none: empty), each escaped. */
export function encodeRequest(id: number, script: string, stdin?: Buffer): string {
  const input = stdin?.length ? ` ${escapeWord(stdin)}` : '';
  return `${id} ${escapeWord(Buffer.from(script, 'utf8'))}${input}\n`;
}

export interface ShellReply {
  id: number;
  /** the script's exit status as sh reports it (128+N when a signal ended it) */
  code: number;
  stdout: Buffer;
  stderr: Buffer;
}

/**
 * Reads a command shell's stdout: first the ready line (learning the shell's pid), then replies.
 * Pure: bytes in, events out, whatever the chunking.
 */
export class ReplyReader {
  pid: number | null = null;
  /** the last request id the loop said it took */
  started = 0;
  private buf: Buffer = Buffer.alloc(0);
  /** a header that went wrong: the stream is not a command shell's (the caller drops the shell) */
  broken: string | null = null;

  /** the reply whose body is being read: its header, and the body's pieces so far */
  private body: {
    id: number;
    code: number;
    outLen: number;
    need: number;
    parts: Buffer[];
    got: number;
  } | null = null;

  push(chunk: Buffer): ShellReply[] {
    const replies: ShellReply[] = [];
    let rest: Buffer = chunk;
    for (;;) {
      // a body is gathered in pieces and joined once: a 50 MB file read must not be copied per chunk
      if (this.body !== null) {
        const b = this.body;
        const take = rest.subarray(0, b.need - b.got);
        if (take.length) b.parts.push(take);
        b.got += take.length;
        rest = rest.subarray(take.length);
        if (b.got < b.need) return replies;
        const whole = Buffer.concat(b.parts, b.need);
        replies.push({
          id: b.id,
          code: b.code,
          stdout: Buffer.from(whole.subarray(0, b.outLen)),
          stderr: Buffer.from(whole.subarray(b.outLen)),
        });
        this.body = null;
      }
      this.buf = this.buf.length ? Buffer.concat([this.buf, rest]) : rest;
      rest = Buffer.alloc(0);
      if (this.pid === null && !this.readReady()) return replies;
      const nl = this.buf.indexOf(10);
      if (nl < 0 || this.broken) return replies;
      const head = this.buf.subarray(0, nl).toString('latin1');
      rest = this.buf.subarray(nl + 1);
      this.buf = Buffer.alloc(0);
      const started = /^@@NSA-S (\d+)$/.exec(head);
      if (started) {
        this.started = Number(started[1]);
        continue;
      }
      const m = /^@@NSA-R (\d+) +(\d+) +(\d+) +(\d+)$/.exec(head);
      if (!m) {
        this.broken = `unexpected reply from the command shell: ${JSON.stringify(head.slice(0, 80))}`;
        return replies;
      }
      const outLen = Number(m[3]);
      this.body = {
        id: Number(m[1]),
        code: Number(m[2]),
        outLen,
        need: outLen + Number(m[4]),
        parts: [],
        got: 0,
      };
    }
  }

  private readReady(): boolean {
    const at = this.buf.indexOf(READY);
    if (at < 0) {
      // keep only what could still be the start of the ready marker
      if (this.buf.length > READY.length) this.buf = this.buf.subarray(this.buf.length - READY.length);
      return false;
    }
    const nl = this.buf.indexOf(10, at);
    if (nl < 0) return false;
    const pid = Number(this.buf.subarray(at + READY.length, nl).toString('latin1'));
    if (!Number.isInteger(pid) || pid <= 0) {
      this.broken = 'the command shell did not say its pid';
      return false;
    }
    this.pid = pid;
    this.buf = this.buf.subarray(nl + 1);
    return true;
  }
}
