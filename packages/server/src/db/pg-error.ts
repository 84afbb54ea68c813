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

/** A unique violation of the named index or constraint (its name is in the driver's message on both drivers). */
export function isUniqueViolationOf(e: unknown, constraint: string): boolean {
  if (pgErrorCode(e) !== '23505') return false;
  let cur: unknown = e;
  for (let i = 0; i < 4 && cur && typeof cur === 'object'; i++) {
    const c = cur as { message?: unknown; constraint_name?: unknown; constraint?: unknown };
    if (c.constraint_name === constraint || c.constraint === constraint) return true;
    if (typeof c.message === 'string' && c.message.includes(`"${constraint}"`)) return true;
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
}

/** Driver codes of a connection that could not be made or was lost (postgres-js, Node's net). */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

/**
 * The database could not be reached (connection refused, reset, timed out) or is shutting
 * down / overloaded (SQLSTATE class 08, 57P01–57P03, 53300): the request may well succeed
 * later, so it is answered 503, not 500.
 */
export function isDatabaseUnavailable(e: unknown): boolean {
  let cur: unknown = e;
  for (let i = 0; i < 4 && cur && typeof cur === 'object'; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (CONNECTION_ERROR_CODES.has(code)) return true;
      if (/^08[0-9A-Z]{3}$/.test(code) || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300') return true;
    }
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
}
