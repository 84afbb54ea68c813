import { createHash, randomBytes } from 'node:crypto';

/** A bearer secret: a recognisable prefix and 32 random bytes (256 bits), base64url. */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** Secrets are random and long, so a plain sha256 is enough to store them (no KDF needed). */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
