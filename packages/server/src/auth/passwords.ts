import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Passwords are stored as `scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>`: the parameters go
 * with the hash, so they can be raised later without breaking stored ones.
 * N=2^15, r=8 takes 32 MiB and ~50-100 ms per hash here: the memory is the point.
 */
const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

function scryptAsync(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  // maxmem must exceed 128 * N * r (the default 32 MiB is just short of N=2^15, r=8).
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keylen, { ...opts, maxmem: 256 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, KEY_LENGTH, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4]!, 'base64');
  const expected = Buffer.from(parts[5]!, 'base64');
  if (!N || !r || !p || expected.length === 0) return false;
  const key = await scryptAsync(password, salt, expected.length, { N, r, p });
  return timingSafeEqual(key, expected);
}

/**
 * A hash to check against when the username is unknown, so that answer takes as long as a
 * wrong password. Made once with today's parameters from a random password nobody knows;
 * a constant, so no process keeps state for it.
 */
const DUMMY_HASH = 'scrypt$32768$8$1$zMgQtPCwCd06pBJz/pL0ug==$VY4UVJ34X1ArPq+YiY6xJRFYOK9QIGHJ3HbfCsbAAus=';
export async function verifyAgainstDummy(password: string): Promise<false> {
  await verifyPassword(password, DUMMY_HASH);
  return false;
}

/** A password for people to copy: 24 base64url characters (144 bits). */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
