import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com/): the secret is `whsec_`
 * and the base64 of random bytes; a message is signed as
 * `v1,<base64 HMAC-SHA256(secret bytes, "<webhook-id>.<webhook-timestamp>.<body>")>`.
 */
export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes (the specification asks for 24 to 64). */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

function secretBytes(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, 'base64');
}

/** `v1,<base64 signature>` of one message. `timestampS`: whole seconds since the epoch. */
export function signWebhook(secret: string, id: string, timestampS: number, body: string): string {
  const mac = createHmac('sha256', secretBytes(secret)).update(`${id}.${timestampS}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of a signed message. */
export function webhookHeaders(secret: string, id: string, timestampS: number, body: string): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': signWebhook(secret, id, timestampS, body),
  };
}

/**
 * Whether one of the space-separated `v1,` signatures of a header matches (what a receiver
 * does; our tests also check with the `standardwebhooks` package).
 */
export function verifyWebhookSignature(secret: string, id: string, timestampS: number, body: string, header: string): boolean {
  const want = Buffer.from(signWebhook(secret, id, timestampS, body));
  return header.split(' ').some((sig) => {
    const got = Buffer.from(sig);
    return got.length === want.length && timingSafeEqual(got, want);
  });
}
