/**
 * Capped exponential backoff with full jitter: a delay drawn uniformly from
 * [0, min(cap, base·2^attempt)]. Spreads the reconnects of many boards after a server
 * restart instead of having them all arrive at once.
 */
export function fullJitterDelay(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * ceiling);
}
