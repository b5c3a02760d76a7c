/** One line of a JSONL file as an object, or null when it is not a JSON object (caller counts it). */
export function parseJsonObject(line: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(line) as unknown;
    return v === null || typeof v !== 'object' || Array.isArray(v) ? null : (v as Record<string, unknown>);
  } catch {
    return null;
  }
}
