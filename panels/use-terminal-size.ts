/**
 * Terminal size from Ink's stdout, kept current through 'resize'. Ink 6 has no `useWindowSize`
 * (that arrived in Ink 7), and it re-lays out on resize without re-rendering our components.
 */
import { useStdout } from 'ink';
import { useEffect, useState } from 'react';

export interface TerminalSize {
  columns: number;
  rows: number;
}

/** Used when the stream reports no size (a pipe, a test double): the classic 80×24. */
export const FALLBACK_SIZE: TerminalSize = { columns: 80, rows: 24 };

function read(stdout: NodeJS.WriteStream): TerminalSize {
  return { columns: stdout.columns || FALLBACK_SIZE.columns, rows: stdout.rows || FALLBACK_SIZE.rows };
}

export function useTerminalSize(): TerminalSize {
  const { stdout } = useStdout();
  const [size, setSize] = useState(() => read(stdout));
  useEffect(() => {
    const onResize = () =>
      setSize((prev) => {
        const next = read(stdout);
        return next.columns === prev.columns && next.rows === prev.rows ? prev : next;
      });
    stdout.on('resize', onResize);
    onResize();
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return size;
}
