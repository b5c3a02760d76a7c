/**
 * The one keybinding table. It drives both dispatch (`commandForKey`) and the `?` help overlay, so
 * the help can never drift from what the keys do. No F-keys: they are unreliable through tmux/ssh.
 */

import { type Binding, commandIn, type KeyFlags } from './key-binding.js';

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

export type DashboardBinding = Binding<Command, KeyState>;

/**
 * Ctrl+Z, as `less` takes it: raw mode turns off the terminal's own SIGTSTP, so the key arrives as
 * input and the view suspends itself (terminal given back, then SIGTSTP; `fg` redraws it). Shared
 * by the dashboard's and the notebook's tables.
 */
export const SUSPEND_KEY = {
  keys: ['Ctrl+Z'],
  description: 'suspend to the shell, as less does; fg comes back',
} as const;

export const BINDINGS: readonly DashboardBinding[] = [
  {
    command: 'dump',
    keys: ['d'],
    description: 'stack dump: SIGUSR1 to the trainer (after a SigCgt check)',
    hint: 'dump',
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
    unavailable: (s) => (s.ended ? 'the run has ended: no process left to sample' : null),
  },
  {
    command: 'lanes',
    keys: ['l'],
    description: 'switch lane: pick, confirm, restart the run',
    hint: 'lane',
    unavailable: (s) => s.laneLocked,
  },
  {
    command: 'terminal',
    keys: ['t'],
    description: "the run's own terminal (tmux pane: progress bars, typing); Ctrl-] comes back",
    hint: 'terminal',
    unavailable: (s) => (s.ended ? 'the run has ended: its output is in the log pane' : null),
  },
  { command: 'scrollUp', keys: ['↑', 'k'], description: 'scroll the log up' },
  { command: 'scrollDown', keys: ['↓', 'j'], description: 'scroll the log down' },
  { command: 'pageUp', keys: ['PgUp', 'b'], description: 'log page up' },
  { command: 'pageDown', keys: ['PgDn', 'space'], description: 'log page down' },
  { command: 'follow', keys: ['G'], description: 'follow the newest output again', hint: 'follow' },
  { command: 'help', keys: ['?'], description: 'show / hide this help', hint: 'help' },
  {
    command: 'cancelJob',
    keys: ['K'],
    description: 'a Slurm run: cancel its job (scancel; asks first). Quitting never cancels it',
  },
  { command: 'suspend', ...SUSPEND_KEY },
  {
    command: 'quit',
    keys: ['q', 'Ctrl+C'],
    description: 'quit (asks first; in a notebook cell: back at once); while stopping: kill now',
    hint: 'quit',
  },
];

/** the dashboard's command for one key event (a burst of one key counts once; a paste is nothing) */
export function commandForKey(input: string, key: KeyFlags): Command | null {
  return commandIn(BINDINGS, input, key);
}

/** why `command` cannot act in state `s`, or null when it can (the binding table says) */
export function unavailableReason(command: Command, s: KeyState): string | null {
  return BINDINGS.find((b) => b.command === command)?.unavailable?.(s) ?? null;
}
