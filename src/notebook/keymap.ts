/**
 * The notebook view's one table of commands: keys, `:` palette names and descriptions. Dispatch,
 * the palette and the `?` help all read it, so none of them can drift from the others.
 */
import { ch, type KeyFlags, SUSPEND_KEY } from '../session/keymap.js';

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

/** one row of a table: the command, its keys as the help shows them, and what it matches */
interface Binding<C> {
  command: C;
  keys: string[];
  /** the `:` palette word (notebook commands); `lane` takes an argument */
  palette?: string;
  /** the env editor's hint line, and the list's offer of a check: short */
  hint?: string;
  /** the list's footer word; consecutive rows with the same word share it (`j/k move`) */
  footer?: string;
  description: string;
  matches(input: string, key: KeyFlags): boolean;
}

export const NOTEBOOK_BINDINGS: readonly Binding<NotebookCommand>[] = [
  {
    command: 'down',
    footer: 'move',
    keys: ['↓', 'j'],
    description: 'next cell',
    matches: (i, k) => !!k.downArrow || ch('j')(i, k),
  },
  {
    command: 'up',
    footer: 'move',
    keys: ['↑', 'k'],
    description: 'previous cell',
    matches: (i, k) => !!k.upArrow || ch('k')(i, k),
  },
  {
    command: 'open',
    footer: 'open',
    keys: ['Enter'],
    description: "the cell's dashboard (live or finished); q there comes back here",
    matches: (_i, k) => !!k.return,
  },
  {
    command: 'new',
    footer: 'new',
    keys: ['n'],
    palette: 'lane',
    description: 'new cell from a lane (:lane NAME); queued while another cell runs',
    matches: ch('n'),
  },
  {
    command: 'check',
    footer: 'check',
    keys: ['p'],
    palette: 'check',
    hint: 'checks it',
    description:
      "box check (preflight) for the cell's lane on this target, as a check cell (:check NAME for a lane; no cell: pick one)",
    matches: ch('p'),
  },
  {
    command: 'rerun',
    footer: 're-run',
    keys: ['r'],
    palette: 'rerun',
    description: 're-run the cell (or its box check) as a new linked cell',
    matches: ch('r'),
  },
  {
    command: 'env',
    footer: 'env',
    keys: ['e'],
    description:
      'env editor: space flips a flag 0↔1, = types a value, f picks a known flag, Enter runs a new cell (queued while one runs)',
    matches: ch('e'),
  },
  {
    command: 'mark',
    footer: 'mark',
    keys: ['m'],
    description: 'mark / unmark the cell for compare',
    matches: ch('m'),
  },
  {
    command: 'compare',
    footer: 'compare',
    keys: ['c'],
    palette: 'compare',
    description: 'compare the two marked cells',
    matches: ch('c'),
  },
  {
    command: 'bisect',
    footer: 'bisect',
    keys: ['b'],
    palette: 'bisect',
    description:
      'bisect the two marked cells (GO vs NO-GO): the smallest env change that flips it; b alone shows the table',
    matches: ch('b'),
  },
  {
    command: 'delete',
    footer: 'delete',
    keys: ['x'],
    description: 'delete the cell, or take a queued one off the queue (asks; No by default)',
    matches: ch('x'),
  },
  {
    command: 'report',
    footer: 'report',
    keys: ['w'],
    palette: 'report',
    description: 'write the report (Markdown + SVG) beside the notebook',
    matches: ch('w'),
  },
  { command: 'palette', footer: 'palette', keys: [':'], description: 'command palette', matches: ch(':') },
  {
    command: 'help',
    footer: 'help',
    keys: ['?'],
    palette: 'help',
    description: 'show / hide this help',
    matches: ch('?'),
  },
  { command: 'suspend', ...SUSPEND_KEY },
  {
    command: 'quit',
    footer: 'quit',
    keys: ['q', 'Ctrl+C'],
    palette: 'quit',
    description: 'quit (a running cell is stopped, its verdict kept)',
    matches: (i, k) => ch('q')(i, k) || (!!k.ctrl && i === 'c'),
  },
];

export function notebookCommandForKey(input: string, key: KeyFlags): NotebookCommand | null {
  const single = input.length > 1 && [...input].every((c) => c === input[0]) ? input[0]! : input;
  for (const b of NOTEBOOK_BINDINGS) if (b.matches(single, key)) return b.command;
  return null;
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
  {
    command: 'down',
    keys: ['↓', 'j'],
    description: 'next variable',
    matches: (i, k) => !!k.downArrow || ch('j')(i, k),
  },
  {
    command: 'up',
    keys: ['↑', 'k'],
    description: 'previous variable',
    matches: (i, k) => !!k.upArrow || ch('k')(i, k),
  },
  {
    command: 'flip',
    keys: ['space', 't'],
    hint: 'flips 0↔1',
    description: 'flip the highlighted flag 0↔1',
    matches: (i, k) => ch(' ')(i, k) || ch('t')(i, k),
  },
  {
    command: 'value',
    keys: ['='],
    hint: 'types a value',
    description:
      'type a value for the highlighted variable; the values the lanes and the trainer know are offered',
    matches: ch('='),
  },
  {
    command: 'unset',
    keys: ['u'],
    hint: 'unsets',
    description: 'unset the highlighted variable',
    matches: ch('u'),
  },
  {
    command: 'flags',
    keys: ['f'],
    hint: 'known flags',
    description: 'pick a variable from the flags the lanes and the trainer know (or type a new name)',
    matches: ch('f'),
  },
  {
    command: 'run',
    keys: ['Enter'],
    hint: 'runs a new cell',
    description: 'run the edit as a new cell (queued while another cell runs)',
    matches: (_i, k) => !!k.return,
  },
  {
    command: 'close',
    keys: ['Esc'],
    description: 'close the editor, nothing runs',
    matches: (_i, k) => !!k.escape,
  },
];

export function envCommandForKey(input: string, key: KeyFlags): EnvCommand | null {
  for (const b of ENV_BINDINGS) if (b.matches(input, key)) return b.command;
  return null;
}

/** "space flips 0↔1 · = types a value · ..." for the editor's title line */
export function envHints(): string {
  return [...ENV_BINDINGS.filter((b) => b.hint).map((b) => `${b.keys[0]} ${b.hint}`), 'Esc'].join(' · ');
}
