import { createHash, timingSafeEqual } from 'node:crypto';

export function sha256Hex(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/** Constant-time comparison: hash both sides so lengths never leak either. */
export function tokensEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1];
}
