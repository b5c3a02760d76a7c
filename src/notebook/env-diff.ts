/** changed, added and removed variables from `a` to `b`, as `NAME=new` / `-NAME`, sorted by name */
export function envDiff(a: Record<string, string>, b: Record<string, string>): string[] {
  const out: string[] = [];
  for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (!(k in b)) out.push(`-${k}`);
    else if (a[k] !== b[k]) out.push(`${k}=${b[k]}`);
  }
  return out;
}

/** `env` with `edits` applied: a value sets its variable, null unsets it */
export function withEdits(
  env: Record<string, string>,
  edits: Record<string, string | null>,
): Record<string, string> {
  const out = { ...env };
  for (const [k, v] of Object.entries(edits)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}
