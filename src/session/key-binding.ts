/**
 * Keys as data: a binding names its keys the way the help writes them ('d', '↑', 'PgDn', 'space',
 * 'Enter', 'Esc', 'Ctrl+Z'), and both what a key event matches and every label shown are derived
 * from those names, so the help, the footers and dispatch cannot disagree. One Binding type for
 * every table (the dashboard's, the notebook list's, the env editor's).
 */

/** The subset of Ink's `Key` we match on (kept structural so the engine needs no Ink import). */
export interface KeyFlags {
  upArrow?: boolean;
  downArrow?: boolean;
  pageUp?: boolean;
  pageDown?: boolean;
  ctrl?: boolean;
  meta?: boolean;
  escape?: boolean;
  return?: boolean;
}

/** a key's name as the help shows it: one character, a named key, or `Ctrl+` a letter */
export type KeyName = string;

const NAMED: Record<string, (input: string, key: KeyFlags) => boolean> = {
  '↑': (_i, k) => !!k.upArrow,
  '↓': (_i, k) => !!k.downArrow,
  PgUp: (_i, k) => !!k.pageUp,
  PgDn: (_i, k) => !!k.pageDown,
  Enter: (_i, k) => !!k.return,
  Esc: (_i, k) => !!k.escape,
  space: (i, k) => !k.ctrl && !k.meta && i === ' ',
};

/** what a key name matches; throws on a name no key has (the tables are checked by a test) */
export function keyMatcher(name: KeyName): (input: string, key: KeyFlags) => boolean {
  const named = NAMED[name];
  if (named) return named;
  const ctrl = /^Ctrl\+([A-Z])$/.exec(name);
  if (ctrl) {
    const letter = ctrl[1]!.toLowerCase();
    return (i, k) => !!k.ctrl && i === letter;
  }
  if ([...name].length === 1) return (i, k) => !k.ctrl && !k.meta && i === name;
  throw new Error(`no key is named ${JSON.stringify(name)}`);
}

export interface Binding<C extends string, S = never> {
  command: C;
  /** the keys, by name: matched and shown from the same words */
  keys: readonly KeyName[];
  description: string;
  /** a short word for a footer or hint line, for the keys worth a place there */
  hint?: string;
  /** the `:` palette word (notebook commands) */
  palette?: string;
  /** the list's footer word; consecutive rows with the same word share it (`j/k move`) */
  footer?: string;
  /** why the key cannot act in state `s` (said on the status line), or null when it can */
  unavailable?(s: S): string | null;
}

export function bindingMatches(b: Binding<string, unknown>, input: string, key: KeyFlags): boolean {
  return b.keys.some((name) => keyMatcher(name)(input, key));
}

/**
 * Map one key event to a command of `table`. Ink delivers a fast burst of typed characters as one
 * `input` string ("dd"), so a multi-character input is matched on its first character only when
 * all of its characters are the same key; anything else (a paste) matches nothing.
 */
export function commandIn<C extends string, S>(
  table: readonly Binding<C, S>[],
  input: string,
  key: KeyFlags,
): C | null {
  const single = input.length > 1 && [...input].every((c) => c === input[0]) ? input[0]! : input;
  for (const b of table) if (bindingMatches(b, single, key)) return b.command;
  return null;
}
