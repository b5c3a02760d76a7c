/** A status-line message that clears itself, so an old "dump written" does not linger for minutes. */
import { useCallback, useEffect, useRef, useState } from 'react';

export const NOTICE_MS = 10_000;

export function useTransientNotice(ms = NOTICE_MS): [string | null, (text: string) => void] {
  const [notice, setNotice] = useState<string | null>(null);
  const timer = useRef<NodeJS.Timeout | null>(null);
  const show = useCallback(
    (text: string) => {
      if (timer.current) clearTimeout(timer.current);
      setNotice(text);
      timer.current = setTimeout(() => setNotice(null), ms);
      // A pending notice must not keep the process alive after the UI has exited.
      timer.current.unref?.();
    },
    [ms],
  );
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  return [notice, show];
}
