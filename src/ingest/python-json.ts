/**
 * Python's json module writes `NaN`, `Infinity` and `-Infinity` for non-finite floats, which
 * JSON.parse rejects. Heartbeats and the final metrics carry losses, so a NaN loss is exactly the
 * record we must not drop. These helpers accept them and map them to the JS numbers.
 */

// A JSON string (skipped untouched) or one of Python's bare non-finite literals.
const STRING_OR_LITERAL = /"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)/g;
const SENTINEL = '\u0000py-nonfinite:';

function revive(_key: string, value: unknown): unknown {
  if (typeof value === 'string' && value.startsWith(SENTINEL)) {
    // `NaN`, `Infinity`, `-Infinity`: JavaScript's own names for them
    return Number(value.slice(SENTINEL.length));
  }
  return value;
}

/** JSON.parse that also accepts Python's non-finite literals. Throws on anything else malformed. */
export function parsePythonJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    if (!/NaN|Infinity/.test(text)) throw err;
  }
  const quoted = text.replace(STRING_OR_LITERAL, (m, lit: string | undefined) =>
    // the sentinel is written escaped: a raw NUL inside a JSON string is itself invalid JSON
    lit === undefined ? m : `"\\u0000py-nonfinite:${lit}"`,
  );
  return JSON.parse(quoted, revive);
}
