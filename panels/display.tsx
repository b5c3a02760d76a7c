/**
 * How text reaches the screen: every string a panel draws from remote sources (log lines, dump
 * frames and file names, GPU and process names, lane text, notices that quote a box's errors) goes
 * through `useClean()`, and ASCII mode folds the whole frame.
 *
 * Why the panels sanitise at render rather than the engine at ingest: this is the one place every
 * path ends, whichever engine module (parser, follower, poller, session notice) produced the text;
 * a field added to the state later is drawn by a panel and cleaned there, and the frame test that
 * fills every string of a state with escapes fails if it is not. It only costs the rows on screen
 * (a few dozen per frame, most returned untouched by the fast path), not every line ingested.
 */
import { createContext, createElement, type ReactNode, useContext } from 'react';
import { boundLine, cutMark, LOG_LINE_CHARS } from '../src/session/log-line.js';
import { sanitizeText } from '../src/util/ansi.js';
import { asciiText, foldToAscii } from './ascii.js';

const AsciiContext = createContext(false);

/**
 * No row is wider than a terminal, and Ink measures every character it is given on every frame: a
 * string longer than that (a megabyte exception message, a runaway line in a dump) is cut before it
 * reaches Ink, saying how much it leaves out. The log's lines are already cut as they arrive.
 */
export function boundForDrawing(s: string): string {
  if (s.length <= LOG_LINE_CHARS) return s;
  const b = boundLine(s);
  return b.cutBytes === undefined ? b.text : `${b.text}${cutMark(b.cutBytes)}`;
}

const clean = (s: string) => sanitizeText(boundForDrawing(s));
const cleanAscii = (s: string) => asciiText(sanitizeText(boundForDrawing(s)));

/** The sanitiser for remote text, ASCII-only in ASCII mode. */
export function useClean(): (s: string) => string {
  return useContext(AsciiContext) ? cleanAscii : clean;
}

// Ink's own <Transform> is a Text and cannot hold Boxes; its box element takes the same
// `internal_transform`, applied to every line of text below it after layout and clipping
// (Ink's truncation ellipsis included). The ASCII frame test guards this against Ink upgrades.
const foldBoxProps = { style: { flexDirection: 'column' }, internal_transform: foldToAscii };

/** Provides the mode to `useClean` and, in ASCII mode, folds everything drawn below to ASCII. */
export function DisplayMode({ ascii, children }: { ascii: boolean; children?: ReactNode }) {
  return (
    <AsciiContext.Provider value={ascii}>
      {ascii ? createElement('ink-box', foldBoxProps, children) : children}
    </AsciiContext.Provider>
  );
}
