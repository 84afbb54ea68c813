/**
 * When a failed delivery is tried again (docs/webhooks.md, "Retries"): exponential backoff
 * with full jitter, a `Retry-After` from the receiver honoured, no retry past the delivery's
 * give-up time. Pure: the worker passes the clock's time and its random source.
 */

export interface RetryPolicy {
  /** The first retry waits up to this… */
  baseMs: number;
  /** …each one doubles it, up to this. */
  maxMs: number;
}

/** The wait before retry number `failures` (1: after the first failed attempt): uniform in [0, min(max, base·2^(failures−1))]. */
export function retryDelayMs(failures: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(Math.max(0, failures - 1), 40));
  return Math.floor(random() * exp);
}

/** A `Retry-After` header (seconds, or an HTTP date) as a wait from `nowMs`, or undefined. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
}

/** What one attempt came to. */
export type AttemptOutcome =
  | { kind: 'delivered'; statusCode: number }
  /** 410 Gone: the receiver says the endpoint is gone for good; the subscription is turned off. */
  | { kind: 'gone'; statusCode: number }
  | { kind: 'failed'; statusCode: number | null; error: string; retryAfterMs?: number | undefined };

/** An HTTP answer as an outcome: 2xx delivered, 410 gone, anything else (redirects too: never followed) a failure. */
export function outcomeOfStatus(statusCode: number, retryAfterMs?: number, detail?: string): AttemptOutcome {
  if (statusCode >= 200 && statusCode < 300) return { kind: 'delivered', statusCode };
  if (statusCode === 410) return { kind: 'gone', statusCode };
  const what = statusCode >= 300 && statusCode < 400 ? 'a redirect (not followed)' : `HTTP ${statusCode}`;
  return { kind: 'failed', statusCode, error: detail ? `${what}: ${detail}` : what, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
}

export type NextState =
  | { status: 'delivered' }
  | { status: 'failed'; disableSubscription: boolean; why: string }
  | { status: 'pending'; nextAttemptAt: number };

/**
 * The delivery's state after an attempt. `attempts` counts the attempts so far, this one
 * included; `giveUpAt` is when retrying stops. A retry due after `giveUpAt` is moved to
 * `giveUpAt` (one last attempt then), unless the receiver's Retry-After asks for later: then
 * the delivery fails now rather than ignore it.
 */
export function nextState(outcome: AttemptOutcome, delivery: { attempts: number; giveUpAt: number }, nowMs: number, policy: RetryPolicy, random: () => number = Math.random): NextState {
  if (outcome.kind === 'delivered') return { status: 'delivered' };
  if (outcome.kind === 'gone') return { status: 'failed', disableSubscription: true, why: 'the receiver answered 410 Gone' };
  if (nowMs >= delivery.giveUpAt) return { status: 'failed', disableSubscription: false, why: 'retried until the give-up time' };
  const backoff = retryDelayMs(delivery.attempts, policy, random);
  const wait = Math.max(backoff, outcome.retryAfterMs ?? 0);
  const at = nowMs + wait;
  if (at <= delivery.giveUpAt) return { status: 'pending', nextAttemptAt: at };
  if (outcome.retryAfterMs !== undefined && nowMs + outcome.retryAfterMs > delivery.giveUpAt) {
    return { status: 'failed', disableSubscription: false, why: 'the receiver asked to wait past the give-up time (Retry-After)' };
  }
  return { status: 'pending', nextAttemptAt: delivery.giveUpAt };
}
