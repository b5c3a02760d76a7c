/**
 * Module hooks (node:module `register`) that put a memo in front of `string-width` for the UI.
 * Ink measures every text node with it on each frame, and for any text that is not plain ASCII
 * (the braille charts, sparklines, the `·` separators) string-width segments graphemes and runs an
 * emoji regex per character: a third of a dashboard frame's CPU, for the same strings frame after
 * frame. The width of a string never changes, so a bounded map answers repeats. Every copy of
 * string-width (each version a dependency brings) gets its own memo in front of it; calls with
 * options go straight through.
 */
import type { LoadHook, ResolveHook } from 'node:module';

const SCHEME = 'nsa-dbg-width-memo:';

export const resolve: ResolveHook = async (specifier, context, nextResolve) => {
  const r = await nextResolve(specifier, context);
  if (specifier !== 'string-width' || context.parentURL?.startsWith(SCHEME)) return r;
  return { url: SCHEME + r.url, format: 'module', shortCircuit: true };
};

export const load: LoadHook = async (url, context, nextLoad) => {
  if (!url.startsWith(SCHEME)) return nextLoad(url, context);
  const real = JSON.stringify(url.slice(SCHEME.length));
  const source = `import width from ${real};
const cache = new Map();
export default function stringWidth(text, options) {
  if (options !== undefined || typeof text !== 'string') return width(text, options);
  let w = cache.get(text);
  if (w === undefined) {
    w = width(text);
    if (cache.size >= 10000) cache.clear();
    cache.set(text, w);
  }
  return w;
}
`;
  return { format: 'module', source, shortCircuit: true };
};
