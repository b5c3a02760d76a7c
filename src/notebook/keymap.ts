/**
 * The notebook view's one table of commands: keys, `:` palette names and descriptions. Dispatch,
 * the palette and the `?` help all read it, so none of them can drift from the others.
 */
import { type Binding, commandIn, type KeyFlags } from '../session/key-binding.js';
import { SUSPEND_KEY } from '../session/keymap.js';

export type NotebookCommand =
  | 'down'
  | 'up'
  | 'open'
  | 'new'
  | 'check'
  | 'rerun'
  | 'env'
  | 'mark'
  | 'compare'
  | 'bisect'
  | 'delete'
  | 'report'
  | 'palette'
  | 'help'
  | 'suspend'
  | 'quit';

export const NOTEBOOK_BINDINGS: readonly Binding<NotebookCommand>[] = [
  { command: 'down', footer: 'move', keys: ['↓', 'j'], description: 'next cell' },
  { command: 'up', footer: 'move', keys: ['↑', 'k'], description: 'previous cell' },
  {
    command: 'open',
    footer: 'open',
    keys: ['Enter'],
    description: "the cell's dashboard (live or finished); q there comes back here",
  },
  {
    command: 'new',
    footer: 'new',
    keys: ['n'],
    palette: 'lane',
    description: 'new cell from a lane (:lane NAME); queued while another cell runs',
  },
  {
    command: 'check',
    footer: 'check',
    keys: ['p'],
    palette: 'check',
    hint: 'checks it',
    description:
      "box check (preflight) for the cell's lane on this target, as a check cell (:check NAME for a lane; no cell: pick one)",
  },
  {
    command: 'rerun',
    footer: 're-run',
    keys: ['r'],
    palette: 'rerun',
    description: 're-run the cell (or its box check) as a new linked cell',
  },
  {
    command: 'env',
    footer: 'env',
    keys: ['e'],
    description:
      'env editor: space flips a flag 0↔1, = types a value, f picks a known flag, Enter runs a new cell (queued while one runs)',
  },
  { command: 'mark', footer: 'mark', keys: ['m'], description: 'mark / unmark the cell for compare' },
  {
    command: 'compare',
    footer: 'compare',
    keys: ['c'],
    palette: 'compare',
    description: 'compare the two marked cells',
  },
  {
    command: 'bisect',
    footer: 'bisect',
    keys: ['b'],
    palette: 'bisect',
    description:
      'bisect the two marked cells (GO vs NO-GO): the smallest env change that flips it; b alone shows the table',
  },
  {
    command: 'delete',
    footer: 'delete',
    keys: ['x'],
    description: 'delete the cell, or take a queued one off the queue (asks; No by default)',
  },
  {
    command: 'report',
    footer: 'report',
    keys: ['w'],
    palette: 'report',
    description: 'write the report (Markdown + SVG) beside the notebook',
  },
  { command: 'palette', footer: 'palette', keys: [':'], description: 'command palette' },
  { command: 'help', footer: 'help', keys: ['?'], palette: 'help', description: 'show / hide this help' },
  { command: 'suspend', ...SUSPEND_KEY },
  {
    command: 'quit',
    footer: 'quit',
    keys: ['q', 'Ctrl+C'],
    palette: 'quit',
    description: 'quit (a running cell is stopped, its verdict kept)',
  },
];

export function notebookCommandForKey(input: string, key: KeyFlags): NotebookCommand | null {
  return commandIn(NOTEBOOK_BINDINGS, input, key);
}

export type PaletteResult = { command: NotebookCommand; arg?: string } | { error: string };

/** `:lane baseline`, `:report`, `:compare`, `:quit` (a unique prefix is enough: `:rep`) */
export function parsePalette(text: string): PaletteResult {
  const [word = '', ...rest] = text.trim().split(/\s+/);
  if (!word) return { error: 'type a command: ' + paletteWords().join(', ') };
  const hits = NOTEBOOK_BINDINGS.filter((b) => b.palette?.startsWith(word.toLowerCase()));
  const exact = hits.find((b) => b.palette === word.toLowerCase());
  const b = exact ?? (hits.length === 1 ? hits[0] : undefined);
  if (!b) return { error: `unknown command :${word} (${paletteWords().join(', ')})` };
  const arg = rest.join(' ') || undefined;
  if (b.command === 'new' && !arg) return { error: ':lane needs a lane name, e.g. :lane batched-prefill' };
  return arg ? { command: b.command, arg } : { command: b.command };
}

/** the palette word as help shows it: `lane NAME`, `check [NAME]`, `report` */
export function paletteLabel(word: string): string {
  return word === 'lane' ? 'lane NAME' : word === 'check' ? 'check [NAME]' : word;
}

export function paletteWords(): string[] {
  return NOTEBOOK_BINDINGS.flatMap((b) => (b.palette ? [paletteLabel(b.palette)] : []));
}

/** the list's footer: `j/k move · Enter open · n new · … · q quit`, from the table */
export function footerHints(): string {
  const parts: Array<{ keys: string[]; word: string }> = [];
  for (const b of NOTEBOOK_BINDINGS) {
    if (!b.footer) continue;
    const key = b.keys.find((k) => k !== '↓' && k !== '↑') ?? b.keys[0]!;
    const last = parts[parts.length - 1];
    if (last?.word === b.footer) last.keys.push(key);
    else parts.push({ keys: [key], word: b.footer });
  }
  return parts.map((p) => `${p.keys.join('/')} ${p.word}`).join(' · ');
}

/** the first key of a command, as help shows it */
export function keyOf(command: NotebookCommand): string {
  return NOTEBOOK_BINDINGS.find((b) => b.command === command)?.keys[0] ?? `:${command}`;
}

/**
 * The list's offer of a box check on a box the notebook has not seen, from the key table:
 * "new box user@gpu1: p checks it (:check)".
 */
export function newBoxOffer(target: string): string {
  const b = NOTEBOOK_BINDINGS.find((x) => x.command === 'check')!;
  return `new box ${target}: ${b.keys[0]} ${b.hint} before its first run (:${b.palette})`;
}

/** The env editor's keys (`e`): its hint line, the `?` help and dispatch all read this table. */
export type EnvCommand = 'down' | 'up' | 'flip' | 'value' | 'unset' | 'flags' | 'run' | 'close';

export const ENV_BINDINGS: readonly Binding<EnvCommand>[] = [
  { command: 'down', keys: ['↓', 'j'], description: 'next variable' },
  { command: 'up', keys: ['↑', 'k'], description: 'previous variable' },
  { command: 'flip', keys: ['space', 't'], hint: 'flips 0↔1', description: 'flip the highlighted flag 0↔1' },
  {
    command: 'value',
    keys: ['='],
    hint: 'types a value',
    description:
      'type a value for the highlighted variable; the values the lanes and the trainer know are offered',
  },
  { command: 'unset', keys: ['u'], hint: 'unsets', description: 'unset the highlighted variable' },
  {
    command: 'flags',
    keys: ['f'],
    hint: 'known flags',
    description: 'pick a variable from the flags the lanes and the trainer know (or type a new name)',
  },
  {
    command: 'run',
    keys: ['Enter'],
    hint: 'runs a new cell',
    description: 'run the edit as a new cell (queued while another cell runs)',
  },
  { command: 'close', keys: ['Esc'], description: 'close the editor, nothing runs' },
];

export function envCommandForKey(input: string, key: KeyFlags): EnvCommand | null {
  return commandIn(ENV_BINDINGS, input, key);
}

/** "space flips 0↔1 · = types a value · ..." for the editor's title line */
export function envHints(): string {
  return [...ENV_BINDINGS.filter((b) => b.hint).map((b) => `${b.keys[0]} ${b.hint}`), 'Esc'].join(' · ');
}
