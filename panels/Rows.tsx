/**
 * A fixed-size column that renders only the first `height` rows it is given. Relying on
 * `overflow="hidden"` alone is not enough: when the content is taller than the box, Yoga first
 * shrinks the rows (some to zero height), so titles and every other line silently vanish.
 * Each child must be exactly one line (a `<Text wrap="truncate-end">`).
 */
import { Box } from 'ink';
import { Children, type ReactNode } from 'react';

export interface RowsProps {
  width: number;
  height: number;
  children?: ReactNode;
}

/** what a pane is given: its size and whether it may colour */
export interface PaneProps {
  width: number;
  height: number;
  color: boolean;
}

export function Rows({ width, height, children }: RowsProps) {
  // toArray flattens nested arrays from `.map` and drops null/false, so slicing counts real rows.
  const rows = Children.toArray(children).slice(0, Math.max(0, height));
  return (
    <Box flexDirection="column" width={width} height={height} flexShrink={0} overflow="hidden">
      {rows}
    </Box>
  );
}
