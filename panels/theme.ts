/**
 * Colour policy. Every panel takes a `color` flag and only passes colours to Ink when it is true, so
 * NO_COLOR holds even where chalk would still colour (chalk honours FORCE_COLOR, not NO_COLOR).
 * Bold, dim and inverse are attributes, not colours, and stay on.
 */
import type { RunPhase } from '../src/session/state.js';

/** NO_COLOR (https://no-color.org): any non-empty value turns colours off. */
export function colorFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return !env.NO_COLOR;
}

export type Tone = 'ok' | 'warn' | 'bad' | 'info' | 'accent' | 'muted';

const TONE_COLORS: Record<Tone, string> = {
  ok: 'green',
  warn: 'yellow',
  bad: 'red',
  info: 'cyan',
  accent: 'magenta',
  muted: 'gray',
};

/** The Ink `color` prop for a tone, or undefined when colours are off. */
export function tone(color: boolean, t: Tone): string | undefined {
  return color ? TONE_COLORS[t] : undefined;
}

export function runPhaseTone(phase: RunPhase, exitCode?: number | null): Tone {
  switch (phase) {
    case 'running':
      return 'ok';
    case 'starting':
    case 'stopping':
      return 'warn';
    case 'exited':
      return exitCode === 0 ? 'info' : 'bad';
    default:
      return 'muted';
  }
}
