import type { Context } from 'hono';
import type { AppEnv } from '../app-context.ts';
import type { Config } from '../config.ts';

/** The first value of a (possibly comma-joined) forwarded header. */
const firstValue = (v: string | undefined) => v?.split(',')[0]?.trim().toLowerCase() || undefined;

/** `https` when the request came over TLS to a proxy that says so (and we trust it), else `http`. */
export function requestProto(c: Context<AppEnv>, config: Config): 'http' | 'https' {
  if (config.trustProxy && firstValue(c.req.header('x-forwarded-proto')) === 'https') return 'https';
  return new URL(c.req.url).protocol === 'https:' ? 'https' : 'http';
}

/**
 * The client's address: the socket's peer, or behind a trusted proxy the last
 * X-Forwarded-For entry (the one that proxy appended; earlier ones are the client's word).
 */
export function clientIp(c: Context<AppEnv>, config: Config): string | null {
  if (config.trustProxy) {
    const last = c.req.header('x-forwarded-for')?.split(',').pop()?.trim();
    if (last) return last;
  }
  return c.env?.incoming?.socket?.remoteAddress ?? null;
}

/** The Host header's host name, lower case, without port or IPv6 brackets. */
export function hostName(hostHeader: string | undefined): string | undefined {
  if (!hostHeader) return undefined;
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  return h.replace(/:\d*$/, '');
}

export function isLoopbackName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(host) || host === '::1';
}

/** Addresses that mean "every interface": not a name a client would use. */
const WILDCARDS = new Set(['0.0.0.0', '::', '']);

/**
 * Host names this server answers for: loopback names, HOST (when it is one address),
 * MM_PUBLIC_URL's host and MM_ALLOWED_HOSTS. A page on another name that resolves to us
 * (DNS rebinding) sends its own name as Host and is refused.
 */
export function hostAllowed(hostHeader: string | undefined, config: Config): boolean {
  const host = hostName(hostHeader);
  if (host === undefined) return false;
  if (isLoopbackName(host)) return true;
  const bind = config.host.toLowerCase().replace(/^\[|\]$/g, '');
  if (!WILDCARDS.has(bind) && host === bind) return true;
  if (config.publicUrl && host === hostName(new URL(config.publicUrl).host)) return true;
  return config.allowedHosts.includes(host);
}

/**
 * Whether a browser marked this request as coming from another site: `Sec-Fetch-Site`
 * cross-site or same-site (a sibling port or subdomain is another origin), or an `Origin`
 * that is not this server's own (as the Host header and proto say, or MM_PUBLIC_URL).
 * Requests with neither header are not from a browser page (browsers send at least one
 * on every state-changing request) and pass.
 */
export function isCrossSite(c: Context<AppEnv>, config: Config): boolean {
  const site = c.req.header('sec-fetch-site')?.toLowerCase();
  if (site === 'cross-site' || site === 'same-site') return true;
  const origin = c.req.header('origin');
  if (origin === undefined) return false;
  if (origin === 'null') return true;
  const own = new Set<string>();
  const host = c.req.header('host');
  if (host) own.add(`${requestProto(c, config)}://${host.toLowerCase()}`);
  if (config.publicUrl) own.add(new URL(config.publicUrl).origin);
  try {
    return !own.has(new URL(origin).origin) && !own.has(origin.toLowerCase());
  } catch {
    return true;
  }
}
