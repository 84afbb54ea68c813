/**
 * Capped exponential backoff with full jitter: a delay drawn uniformly from
 * [0, min(cap, base·2^attempt)]. Spreads the reconnects of many boards after a server
 * restart instead of having them all arrive at once.
 */
export function fullJitterDelay(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * ceiling);
}

/** Answers after which the server names its own wait: busy (503) or rate-limited (429). */
export const RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * A `Retry-After` header in milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3).
 * Undefined when absent or unreadable; a date in the past is 0. `nowMs`: the link's clock.
 */
export function parseRetryAfterMs(value: string | string[] | undefined, nowMs: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date starts with the day's name ("Sun, 06 Nov 1994 08:49:37 GMT").
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * The pause after the server asked for `retryAfterMs`: at least that, plus up to half of it
 * again as jitter (boards refused in the same second must not all return in the same
 * second), never more than the cap; never less than the ordinary backoff `backoffMs`.
 */
export function retryAfterDelay(retryAfterMs: number, backoffMs: number, capMs: number, random: () => number = Math.random): number {
  const asked = Math.min(capMs, retryAfterMs + Math.floor(random() * (retryAfterMs / 2)));
  return Math.max(backoffMs, asked);
}
