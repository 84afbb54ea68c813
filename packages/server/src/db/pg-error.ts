/**
 * drizzle wraps driver errors in a DrizzleQueryError; the SQLSTATE (e.g. '23505', a unique
 * violation) sits on `cause`, on both drivers, so test the code, not class names.
 */
export function pgErrorCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 4 && cur && typeof cur === 'object'; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}
