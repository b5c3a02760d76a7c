/**
 * The one keybinding table. It drives both dispatch (`commandForKey`) and the `?` help overlay, so
 * the help can never drift from what the keys do. No F-keys: they are unreliable through tmux/ssh.
 */

export type Command =
  | 'dump'
  | 'hotFrames'
  | 'lanes'
  | 'terminal'
  | 'quit'
  | 'help'
  | 'scrollUp'
  | 'scrollDown'
  | 'pageUp'
  | 'pageDown'
  | 'follow'
  | 'cancelJob'
  | 'suspend';

/** The subset of Ink's `Key` we match on (kept structural so this file needs no Ink import). */
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

/** What decides whether a key can act now: the run's state and where the dashboard is shown. */
export interface KeyState {
  /** the run has ended: nothing is left to signal, sample or type into */
  ended: boolean;
  /** why the lane cannot be switched here (a notebook cell keeps its lane); null: it can */
  laneLocked: string | null;
  /** `q` asks first (the plain dashboard); a notebook cell's dashboard goes straight back */
  quitAsks: boolean;
}

export const LIVE_KEYS: KeyState = { ended: false, laneLocked: null, quitAsks: true };

export interface Binding {
  command: Command;
  /** labels shown in help, e.g. ["d"], ["↑", "k"] */
  keys: string[];
  description: string;
  /** the footer's short name, for the keys worth a place there */
  hint?: string;
  matches(input: string, key: KeyFlags): boolean;
  /** why the key cannot act in this state (said on the status line), or null when it can */
  unavailable?(s: KeyState): string | null;
}

export const ch = (c: string) => (input: string, key: KeyFlags) => !key.ctrl && !key.meta && input === c;

/**
 * Ctrl+Z, as `less` takes it: raw mode turns off the terminal's own SIGTSTP, so the key arrives as
 * input and the view suspends itself (terminal given back, then SIGTSTP; `fg` redraws it). Shared
 * by the dashboard's and the notebook's tables.
 */
export const SUSPEND_KEY = {
  keys: ['Ctrl+Z'],
  description: 'suspend to the shell, as less does; fg comes back',
  matches: (input: string, key: KeyFlags) => !!key.ctrl && input === 'z',
};

export const BINDINGS: readonly Binding[] = [
  {
    command: 'dump',
    keys: ['d'],
    description: 'stack dump: SIGUSR1 to the trainer (after a SigCgt check)',
    hint: 'dump',
    matches: ch('d'),
    unavailable: (s) =>
      s.ended
        ? 'the run has ended: no process left to dump (the newest dump is in the pane, all of them in the evidence folder)'
        : null,
  },
  {
    command: 'hotFrames',
    keys: ['s'],
    description: 'hot frames: 10 stack samples 1.5 s apart, a table of where the time goes',
    hint: 'hot frames',
    matches: ch('s'),
    unavailable: (s) => (s.ended ? 'the run has ended: no process left to sample' : null),
  },
  {
    command: 'lanes',
    keys: ['l'],
    description: 'switch lane: pick, confirm, restart the run',
    hint: 'lane',
    matches: ch('l'),
    unavailable: (s) => s.laneLocked,
  },
  {
    command: 'terminal',
    keys: ['t'],
    description: "the run's own terminal (tmux pane: progress bars, typing); Ctrl-] comes back",
    hint: 'terminal',
    matches: ch('t'),
    unavailable: (s) => (s.ended ? 'the run has ended: its output is in the log pane' : null),
  },
  {
    command: 'scrollUp',
    keys: ['↑', 'k'],
    description: 'scroll the log up',
    matches: (i, k) => !!k.upArrow || ch('k')(i, k),
  },
  {
    command: 'scrollDown',
    keys: ['↓', 'j'],
    description: 'scroll the log down',
    matches: (i, k) => !!k.downArrow || ch('j')(i, k),
  },
  {
    command: 'pageUp',
    keys: ['PgUp', 'b'],
    description: 'log page up',
    matches: (i, k) => !!k.pageUp || ch('b')(i, k),
  },
  {
    command: 'pageDown',
    keys: ['PgDn', 'space'],
    description: 'log page down',
    matches: (i, k) => !!k.pageDown || ch(' ')(i, k),
  },
  {
    command: 'follow',
    keys: ['G'],
    description: 'follow the newest output again',
    hint: 'follow',
    matches: ch('G'),
  },
  { command: 'help', keys: ['?'], description: 'show / hide this help', hint: 'help', matches: ch('?') },
  {
    command: 'cancelJob',
    keys: ['K'],
    description: 'a Slurm run: cancel its job (scancel; asks first). Quitting never cancels it',
    matches: ch('K'),
  },
  { command: 'suspend', ...SUSPEND_KEY },
  {
    command: 'quit',
    keys: ['q', 'Ctrl+C'],
    description: 'quit (asks first; in a notebook cell: back at once); while stopping: kill now',
    hint: 'quit',
    matches: (i, k) => ch('q')(i, k) || (!!k.ctrl && i === 'c'),
  },
];

/**
 * Map one key event to a command. Ink delivers a fast burst of typed characters as one `input`
 * string ("dd"), so a multi-character input is matched on its first character only when all of
 * its characters are the same key; anything else (a paste) is ignored.
 */
export function commandForKey(input: string, key: KeyFlags): Command | null {
  const single = input.length > 1 && [...input].every((c) => c === input[0]) ? input[0]! : input;
  for (const b of BINDINGS) if (b.matches(single, key)) return b.command;
  return null;
}

/** why `command` cannot act in state `s`, or null when it can (the binding table says) */
export function unavailableReason(command: Command, s: KeyState): string | null {
  return BINDINGS.find((b) => b.command === command)?.unavailable?.(s) ?? null;
}
