/**
 * A view's UI state, kept in a ref as well as in React state: two keys can arrive before React
 * re-renders, and the second must be routed against the state the first one produced. Both apps
 * (the dashboard and the notebook) hold their UI state this way.
 */
import { type MutableRefObject, useCallback, useRef, useState } from 'react';

export function useUiReducer<S, A>(
  reducer: (s: S, a: A) => S,
  initial: S,
): [S, MutableRefObject<S>, (actions: A[]) => void] {
  const [ui, setUi] = useState<S>(initial);
  const ref = useRef(ui);
  const apply = useCallback(
    (actions: A[]) => {
      if (actions.length === 0) return;
      ref.current = actions.reduce(reducer, ref.current);
      setUi(ref.current);
    },
    [reducer],
  );
  return [ui, ref, apply];
}
