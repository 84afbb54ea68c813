import http from 'node:http';
import https from 'node:https';
import type { Clock } from '@mm/protocol';
import { checkLiteral, guardedLookup, hostOf, WebhookUrlRefused, type AddressPolicy } from './address-policy.ts';
import { outcomeOfStatus, parseRetryAfter, type AttemptOutcome } from './backoff.ts';

/** At most this much of an answer is read (then the connection is dropped); the first bytes are kept for the log. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
const KEPT_RESPONSE_CHARS = 200;

export interface SendOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** The whole attempt: resolving, connecting, sending, reading the answer. */
  timeoutMs: number;
  policy: AddressPolicy;
  clock: Clock;
  userAgent: string;
  /** Aborts the attempt (the server is stopping). */
  signal?: AbortSignal | undefined;
}

/**
 * One POST of a delivery (docs/webhooks.md, "How a delivery is sent"): the host is resolved
 * by the policy's resolver and refused if any answer is a refused address, and the socket
 * connects to the checked address (a custom `lookup`, no second query); redirects are not
 * followed; the answer is read up to MAX_RESPONSE_BYTES; the whole attempt has one deadline.
 * Never throws: every failure is an outcome.
 */
export function sendWebhook(opts: SendOptions): Promise<AttemptOutcome> {
  let url: URL;
  try {
    url = new URL(opts.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookUrlRefused(`${url.protocol} URLs are not sent to`);
    checkLiteral(hostOf(url), opts.policy);
  } catch (err) {
    return Promise.resolve({ kind: 'failed', statusCode: null, error: refusalText(err) });
  }
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      opts.clock.clearTimeout(timer);
      resolve(outcome);
    };
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(url, {
      method: 'POST',
      // A fresh connection each time: no socket kept to an address checked for another attempt.
      agent: false,
      lookup: guardedLookup(opts.policy),
      headers: {
        ...opts.headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(opts.body)),
        'user-agent': opts.userAgent,
      },
    });
    const timer = opts.clock.setTimeout(() => {
      req.destroy();
      finish({ kind: 'failed', statusCode: null, error: `no answer within ${Math.round(opts.timeoutMs / 100) / 10} s` });
    }, opts.timeoutMs);
    const onAbort = () => {
      req.destroy();
      finish({ kind: 'failed', statusCode: null, error: 'cut short: the server was stopping' });
    };
    if (opts.signal?.aborted) onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    req.on('close', () => opts.signal?.removeEventListener('abort', onAbort));
    req.on('error', (err) => finish({ kind: 'failed', statusCode: null, error: refusalText(err) }));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const retryAfter = parseRetryAfter(res.headers['retry-after'], opts.clock.now());
      const kept: Buffer[] = [];
      let read = 0;
      const done = () => {
        const text = Buffer.concat(kept).toString('utf8').replace(/\s+/g, ' ').trim().slice(0, KEPT_RESPONSE_CHARS);
        finish(outcomeOfStatus(status, retryAfter, status >= 300 && status < 400 ? (res.headers.location ? `Location: ${res.headers.location}` : undefined) : text || undefined));
        res.destroy();
      };
      res.on('data', (chunk: Buffer) => {
        if (read < KEPT_RESPONSE_CHARS) kept.push(chunk.subarray(0, KEPT_RESPONSE_CHARS - read));
        read += chunk.length;
        // Bounded: the rest of a long answer is not read.
        if (read >= MAX_RESPONSE_BYTES) done();
      });
      res.on('end', done);
      res.on('error', done);
      res.on('close', done);
    });
    req.end(opts.body);
  });
}

function refusalText(err: unknown): string {
  if (err instanceof WebhookUrlRefused) return `refused: ${err.message}`;
  const e = err as NodeJS.ErrnoException;
  return e?.code ? `${e.code}: ${e.message}` : String(e?.message ?? err);
}
