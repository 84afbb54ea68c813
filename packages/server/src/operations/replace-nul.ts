/** What a NUL character in stored text becomes (PostgreSQL text and jsonb cannot hold U+0000). */
export const NUL_REPLACEMENT = '\uFFFD';

/** The value with every U+0000 in its strings (keys too) replaced, ready for a jsonb column. */
export function replaceNul<T>(value: T): T {
  return replaceIn(value) as T;
}

function replaceIn(value: unknown): unknown {
  if (typeof value === 'string') return value.includes('\0') ? value.replaceAll('\0', NUL_REPLACEMENT) : value;
  if (Array.isArray(value)) return value.map(replaceIn);
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[replaceIn(k) as string] = replaceIn(v);
    return out;
  }
  return value;
}
