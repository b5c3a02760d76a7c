/**
 * Bounds Ink 6.8's text-measuring caches. `measure-text.js` (a Map) and `wrap-text.js` (an object)
 * keep every distinct text Ink ever laid out, for the life of the process (ink#986, open upstream in
 * 7.x too): a dashboard whose log and clock change every frame grew its heap by about 1 MB every
 * 4 minutes at 512 ranks, each key a slice that also holds the chunk it was cut from. Neither cache
 * is exported, so each is caught once by a probe text whose store it is asked to make; then the Map
 * is cleared, the object with it, whenever the Map reaches MAX_TEXTS (a frame's texts are measured
 * again, a few ms). Patched only on the Ink version it was written against, like ink-fast-output.
 */
import { importInk68 } from './ink-internals.js';

/** texts kept before both caches are emptied: a dashboard frame has a few hundred */
export const MAX_TEXTS = 5000;

type MeasureText = (text: string) => { width: number; height: number };
type WrapText = (text: string, maxWidth: number, wrapType: string) => string;

let installed = false;
let caught: { texts: Map<string, unknown>; wraps: Record<string, unknown> } | null = null;

/** how many texts each cache holds now (null before installBoundedTextCaches succeeded) */
export function textCacheSizes(): { texts: number; wraps: number } | null {
  return caught === null ? null : { texts: caught.texts.size, wraps: Object.keys(caught.wraps).length };
}

/** the Map that `measure` stores `probe`'s result in */
function catchMap(measure: MeasureText, probe: string): Map<string, unknown> | null {
  const set = Map.prototype.set;
  let caught: Map<string, unknown> | null = null;
  Map.prototype.set = function (this: Map<unknown, unknown>, key: unknown, value: unknown) {
    if (key === probe) caught = this as Map<string, unknown>;
    return set.call(this, key, value);
  };
  try {
    measure(probe);
  } finally {
    Map.prototype.set = set;
  }
  return caught;
}

/** the object that `wrap` stores `probe`'s result in (its key: text, width, wrap type) */
function catchObject(wrap: WrapText, probe: string): Record<string, unknown> | null {
  const key = `${probe}8truncate`;
  let caught: Record<string, unknown> | null = null;
  // an assignment to a key that a prototype has a setter for calls the setter with the object
  Object.defineProperty(Object.prototype, key, {
    configurable: true,
    set(this: Record<string, unknown>) {
      caught = this;
    },
  });
  try {
    wrap(probe, 8, 'truncate');
  } finally {
    delete (Object.prototype as Record<string, unknown>)[key];
  }
  return caught;
}

/** empty `cache` of every key */
function emptyObject(cache: Record<string, unknown>): void {
  for (const k of Object.keys(cache)) delete cache[k];
}

/**
 * Bound both caches (once). Returns false, changing nothing, for an Ink other than 6.8.x or one
 * whose caches are not caught as 6.8 keeps them.
 */
export async function installBoundedTextCaches(maxTexts = MAX_TEXTS): Promise<boolean> {
  if (installed) return true;
  try {
    const measure = await importInk68<{ default: MeasureText }>('measure-text.js');
    const wrap = await importInk68<{ default: WrapText }>('wrap-text.js');
    if (measure === null || wrap === null) return false;
    const probe = `nsa-dbg probe ${process.pid} ${Date.now()}`;
    const texts = catchMap(measure.default, probe);
    const wraps = catchObject(wrap.default, probe);
    if (texts === null || wraps === null) return false;
    const set = Map.prototype.set;
    // the instance's own set, found before the prototype's by measure-text's `cache.set(...)`
    Object.defineProperty(texts, 'set', {
      configurable: true,
      value(this: Map<string, unknown>, key: string, value: unknown) {
        if (this.size >= maxTexts) {
          this.clear();
          emptyObject(wraps);
        }
        return set.call(this, key, value);
      },
    });
    texts.clear();
    emptyObject(wraps);
    caught = { texts, wraps };
    installed = true;
    return true;
  } catch {
    return false;
  }
}
