import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { isTempNameOf, writeFileAtomic } from '../util/atomic-file.js';
import { FileError, fileError, mkdirpSync } from '../util/fs-errors.js';
import { acquireLock, type NotebookLock } from './lock.js';
import { migrate, NotebookFormatError, renumberDuplicateIds } from './migrate.js';
import { emptyNotebook, type Notebook } from './model.js';
import { type NotebookAction, notebookReducer } from './reducer.js';

/** the file `nsa-dbg` opens when started with no subcommand */
export const DEFAULT_NOTEBOOK = 'nsa-notebook.json';

/**
 * Temp files of the notebook's writes that were killed before their rename. Only the lock holder
 * writes it, and we hold the lock, so every one of them is garbage. Not the lock's own temp files
 * (`.NAME.lock.*.tmp`): another process opening the notebook may be writing one at this moment.
 */
function removeStaleTemps(file: string): void {
  for (const f of readdirSync(dirname(file)))
    if (isTempNameOf(file, f)) rmSync(join(dirname(file), f), { force: true });
}

/** the evidence folder beside a notebook: `runs.json` → `runs.evidence/` */
export function evidenceDirOf(file: string): string {
  return `${file.replace(/\.json$/i, '')}.evidence`;
}

/** indented JSON, with each [step, value] pair on one line so series stay readable in a diff */
export function serializeNotebook(nb: Notebook): string {
  const text = JSON.stringify(nb, null, 2).replace(
    /\[\n\s*(-?[\d.e+-]+),\n\s*(-?[\d.e+-]+|null)\n\s*\]/g,
    '[$1, $2]',
  );
  return `${text}\n`;
}

export function parseNotebook(text: string, file: string): Notebook {
  return parseNoting(text, file).nb;
}

/** the notebook, and a line saying what was fixed when it was read (null when nothing was) */
function parseNoting(text: string, file: string): { nb: Notebook; note: string | null } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new NotebookFormatError(file, `not valid JSON (${(e as Error).message})`);
  }
  const { doc: nb, renamed } = renumberDuplicateIds(migrate(doc, file));
  return { nb: nb as unknown as Notebook, note: renamed.length ? renumberedLine(file, renamed) : null };
}

/** "nb.json repeats cell ids: the 2nd c1 is now c4, the 3rd c1 is now c5 (…)" */
function renumberedLine(file: string, renamed: Array<[string, string]>): string {
  const count = new Map<string, number>();
  const parts = renamed.map(([from, to]) => {
    const n = (count.get(from) ?? 1) + 1;
    count.set(from, n);
    return `the ${ordinal(n)} ${from} is now ${to}`;
  });
  return `${basename(file)} repeats cell ids: ${parts.join(', ')} (saved to the file with the next change)`;
}

const ordinal = (n: number) =>
  `${n}${n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th'}`;

/** Read a notebook (any known version) without taking the lock: reports and listings. */
export function readNotebook(file: string): Notebook {
  return readNoting(file).nb;
}

function readNoting(file: string): { nb: Notebook; note: string | null } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new NotebookFormatError(file, 'no such notebook');
    // a folder given as the notebook (EISDIR names no file), a file we may not read
    throw fileError(e, file, 'read the notebook');
  }
  return parseNoting(text, file);
}

/**
 * An open notebook: the lock is held from open to close, every action goes through the reducer and
 * the result is written atomically before `dispatch` returns, so a crash loses at most the action
 * in flight and never leaves a half-written file.
 */
export class NotebookStore {
  private readonly listeners = new Set<(nb: Notebook) => void>();

  private constructor(
    readonly file: string,
    private readonly lock: NotebookLock,
    private nb: Notebook,
    /**
     * what was fixed in memory when the file was read (repeated cell ids), for the opener to show;
     * the file itself is left as it is until the next change writes it
     */
    readonly openNote: string | null = null,
  ) {}

  /** open (creating it when missing) and lock; throws NotebookInUse / NotebookFormatError */
  static open(file: string, now = () => new Date()): NotebookStore {
    const abs = resolve(file);
    // a folder is not a notebook: said before a lock file is left beside it
    if (existsSync(abs) && statSync(abs).isDirectory())
      throw new FileError(abs, 'EISDIR', 'open the notebook', 'it is a directory (give a .json file)');
    let lock: NotebookLock;
    try {
      mkdirpSync(dirname(abs));
      lock = acquireLock(abs);
    } catch (e) {
      // a read-only or foreign folder: the lock beside the notebook cannot be made
      throw fileError(e, `${abs}.lock`, 'create the notebook’s lock');
    }
    try {
      removeStaleTemps(abs);
      if (existsSync(abs)) {
        const { nb, note } = readNoting(abs);
        return new NotebookStore(abs, lock, nb, note);
      }
      const nb = emptyNotebook(now().toISOString());
      writeFileAtomic(abs, serializeNotebook(nb));
      return new NotebookStore(abs, lock, nb);
    } catch (e) {
      lock.release();
      throw e;
    }
  }

  get evidenceDir(): string {
    return evidenceDirOf(this.file);
  }

  get(): Notebook {
    return this.nb;
  }

  dispatch(action: NotebookAction): Notebook {
    const next = notebookReducer(this.nb, action);
    if (next === this.nb) return next;
    // write first: the in-memory notebook never runs ahead of the file (a failed write, such as a
    // folder turned read-only, leaves both as they were and says which file and why)
    try {
      writeFileAtomic(this.file, serializeNotebook(next));
    } catch (e) {
      throw fileError(e, this.file, 'write the notebook');
    }
    this.nb = next;
    for (const l of this.listeners) l(next);
    return next;
  }

  subscribe(cb: (nb: Notebook) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  close(): void {
    this.lock.release();
  }
}
