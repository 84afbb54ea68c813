import type { HttpHeader } from '@mm/protocol';

/**
 * Headers that describe one hop (RFC 9110 §7.6.1) and so never cross the relay, plus the
 * ones that must not reach a device script: `Host` (the agent names 127.0.0.1:<port>) and
 * `Authorization` (the control plane's API token is not the script's business).
 */
const NEVER_FORWARDED: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'authorization',
  // The client's 100-continue handshake was with the control plane; the agent sends the body anyway.
  'expect',
  // HTTP/2 pseudo-headers never appear here, but a client may still send this HTTP/2 leftover.
  'http2-settings',
]);

/** The names a `Connection` header lists: also hop-by-hop, whatever they are. */
function connectionTokens(pairs: readonly HttpHeader[]): Set<string> {
  const tokens = new Set<string>();
  for (const [name, value] of pairs) {
    if (name.toLowerCase() !== 'connection') continue;
    for (const t of value.split(',')) {
      const token = t.trim().toLowerCase();
      if (token) tokens.add(token);
    }
  }
  return tokens;
}

/** A header that may cross the relay (in either direction). */
function forwarded(name: string, listed: Set<string>): boolean {
  const n = name.toLowerCase();
  return !NEVER_FORWARDED.has(n) && !n.startsWith('proxy-') && !listed.has(n);
}

/** Node's `rawHeaders` (name, value, name, value…) as pairs, in order, duplicates kept. */
export function pairsOfRawHeaders(raw: readonly string[]): HttpHeader[] {
  const pairs: HttpHeader[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
  return pairs;
}

/** The end-to-end headers of a request or response: hop-by-hop and private ones removed. */
export function endToEndHeaders(pairs: readonly HttpHeader[]): HttpHeader[] {
  const listed = connectionTokens(pairs);
  // Values with CR/LF/NUL cannot be sent on (and Node's parser never produces them).
  return pairs.filter(([name, value]) => forwarded(name, listed) && !/[\r\n\0]/.test(value));
}

/**
 * Request headers that belong to the control plane, not to a device script: its cookies
 * (the dashboard's session is no script's business), and what a client says about where
 * the request came from (`X-Forwarded-For` and friends): a client can put anything there,
 * and the server adds nothing of its own.
 */
const NOT_FOR_SCRIPTS = new Set(['cookie', 'forwarded', 'x-real-ip']);

/**
 * Response headers a script may not set on the control plane's origin: cookies (they would
 * be the dashboard's). What the script serves is also sandboxed and never type-sniffed,
 * so a script's `text/html` cannot run as the control plane (RELAYED_RESPONSE_HEADERS).
 */
const NOT_FROM_SCRIPTS = new Set(['set-cookie', 'set-cookie2', 'content-security-policy', 'x-content-type-options']);

/** Set on every relayed response, whatever the script sent. */
export const RELAYED_RESPONSE_HEADERS: readonly HttpHeader[] = [
  ['Content-Security-Policy', 'sandbox'],
  ['X-Content-Type-Options', 'nosniff'],
];

/** What of a client's request headers goes to the device script. */
export function requestHeadersForScript(pairs: readonly HttpHeader[]): HttpHeader[] {
  return endToEndHeaders(pairs).filter(([name]) => {
    const n = name.toLowerCase();
    return !NOT_FOR_SCRIPTS.has(n) && !n.startsWith('x-forwarded-');
  });
}

/** What of a script's response headers reaches the client, plus the relay's own. */
export function responseHeadersForClient(pairs: readonly HttpHeader[]): HttpHeader[] {
  return [...endToEndHeaders(pairs).filter(([name]) => !NOT_FROM_SCRIPTS.has(name.toLowerCase())), ...RELAYED_RESPONSE_HEADERS];
}
