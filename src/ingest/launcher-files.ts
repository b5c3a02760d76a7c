/**
 * The launcher's own files in a run folder, owned here: their names, what their text means, and the
 * shell that writes them. Every writer (the run script, the Slurm batch script, the `--hosts`
 * follower) and every reader (the run's lifecycle, the status of a detached run, the evidence, a
 * notebook's recovery) goes through these, so a file cannot be written one way and read another.
 *
 *   pid            the trainer's pid, written by the shell that then execs it
 *   exit_code      the trainer's exit status (128+N when killed by signal N): the run's end
 *   output_held    processes that still held stdout.log when the trainer ended (written before
 *                  exit_code, so whoever sees the end sees them too)
 *   command.json   the run as nsa-dbg started it (runs/spec-file.ts reads it)
 *   launch.json    what a detached, Slurm or `--hosts` launch records about itself when it starts
 *
 * Each is written to `NAME.tmp` and moved into place: a reader sees the whole value or no file.
 */
export const PID_FILE = 'pid';
export const EXIT_CODE_FILE = 'exit_code';
export const OUTPUT_HELD_FILE = 'output_held';
export const COMMAND_FILE = 'command.json';
export const LAUNCH_FILE = 'launch.json';

/** the temp name a launcher file is written under before it is moved into place */
export const tmpNameOf = (file: string): string => `${file}.tmp`;

/** an integer file's text → its value; null when empty or not an integer */
function integerOf(text: string | Buffer | null | undefined): number | null {
  if (text === null || text === undefined) return null;
  const t = text.toString().trim();
  return /^-?\d+$/.test(t) ? Number(t) : null;
}

/** exit_code's text → the status; null when there is none (yet) */
export const exitCodeOf = (text: string | Buffer | null | undefined): number | null => integerOf(text);

/** pid's text → the pid; null when there is none (yet) */
export function pidOf(text: string | Buffer | null | undefined): number | null {
  const n = integerOf(text);
  return n !== null && n > 0 ? n : null;
}

/**
 * Shell: `word` (a shell word: "$?", "$rc", "$$") into `dir/file`, whole or not at all. `dir` is
 * already a shell word (quoted, or "$0").
 */
export function shWriteWhole(dir: string, file: string, word: string): string {
  return `echo ${word} > ${dir}/${tmpNameOf(file)} && mv ${dir}/${tmpNameOf(file)} ${dir}/${file}`;
}

/** reads one file of the run folder (a target's readFile); null when it is not there */
export type ReadRunFile = (path: string) => Promise<Buffer | null>;

/** the run's exit status from its folder; null while it has none */
export async function readExitCode(read: ReadRunFile, runDir: string): Promise<number | null> {
  return exitCodeOf(await read(`${runDir}/${EXIT_CODE_FILE}`).catch(() => null));
}

/** the trainer's pid from its folder; null while it has none */
export async function readPid(read: ReadRunFile, runDir: string): Promise<number | null> {
  return pidOf(await read(`${runDir}/${PID_FILE}`).catch(() => null));
}
