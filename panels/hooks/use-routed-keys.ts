/**
 * One key path for both apps: a chunk of keys is split key by key (a text field keeps it whole),
 * each key is routed against the newest UI state, its actions applied at once and its effect run.
 * Subscribed once with a handler whose identity never changes (Ink re-subscribes whenever it does,
 * and a key typed in that gap is lost).
 */
import { useInput } from 'ink';
import { type MutableRefObject, useCallback, useRef } from 'react';
import type { InkKeyFlags } from '../key-router.js';
import { splitKeys } from '../split-keys.js';

export interface Routed<A, E> {
  actions: A[];
  effect?: E | null;
}

export interface RoutedKeys<S, A, E> {
  ui: MutableRefObject<S>;
  apply: (actions: A[]) => void;
  route: (input: string, key: InkKeyFlags, ui: S) => Routed<A, E>;
  runEffect: (effect: E) => void;
  /** whether the UI is in a text field now (the chunk is typed text) */
  textMode: (ui: S) => boolean;
  /** the input taken before routing (a quit under way, a child view open); true when taken */
  before?: (input: string, key: InkKeyFlags) => boolean;
  /** the rest of a chunk is dropped once this holds (a key of it began the quit) */
  halted?: () => boolean;
}

export function useRoutedKeys<S, A, E>(o: RoutedKeys<S, A, E>): void {
  const latest = useRef(o);
  latest.current = o;
  const onInput = useCallback((input: string, key: InkKeyFlags) => {
    const first = latest.current;
    if (first.before?.(input, key)) return;
    for (const [one, flags] of splitKeys(input, key, first.textMode(first.ui.current))) {
      const c = latest.current;
      if (c.halted?.() === true) return;
      const routed = c.route(one, flags, c.ui.current);
      c.apply(routed.actions);
      if (routed.effect) c.runEffect(routed.effect);
    }
  }, []);
  useInput(onInput);
}
