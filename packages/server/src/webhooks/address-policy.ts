import dns from 'node:dns';
import net from 'node:net';

/**
 * Which addresses a webhook may reach (docs/webhooks.md, "Receivers the server refuses"):
 * not loopback, link-local, private, unique-local, shared (CGNAT), multicast, unspecified,
 * documentation or otherwise reserved ones, IPv4 and IPv6 alike, and not through an IPv6 form
 * that carries an IPv4 address (mapped `::ffff:a.b.c.d`, compatible, NAT64, 6to4). Refused at
 * create and update, and again at connect time on the addresses actually connected to.
 */

/** Why an IPv4 address is refused, or undefined when a webhook may reach it. */
function refusedV4(b: readonly number[]): string | undefined {
  const [a = 0, c = 0, d = 0] = [b[0], b[1], b[2]];
  if (a === 0) return 'unspecified';
  if (a === 10) return 'private';
  if (a === 127) return 'loopback';
  if (a === 169 && c === 254) return 'link-local';
  if (a === 172 && (c & 0xf0) === 16) return 'private';
  if (a === 192 && c === 168) return 'private';
  if (a === 100 && (c & 0xc0) === 64) return 'shared (CGNAT)';
  if (a === 192 && c === 0 && d === 0) return 'reserved';
  if (a === 192 && c === 0 && d === 2) return 'documentation';
  if (a === 192 && c === 88 && d === 99) return 'reserved';
  if (a === 198 && (c & 0xfe) === 18) return 'reserved';
  if (a === 198 && c === 51 && d === 100) return 'documentation';
  if (a === 203 && c === 0 && d === 113) return 'documentation';
  if (a >= 224 && a <= 239) return 'multicast';
  if (a >= 240) return a === 255 && c === 255 && d === 255 && b[3] === 255 ? 'broadcast' : 'reserved';
  return undefined;
}

/** The 16 bytes of an IPv6 address (a zone `%eth0` is dropped), or undefined. */
export function ipv6Bytes(input: string): number[] | undefined {
  const text = input.split('%')[0]!;
  if (!net.isIPv6(text)) return undefined;
  // A trailing dotted IPv4 part becomes two hex groups.
  const withV4 = text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) =>
    `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`,
  );
  const [left = '', right] = withV4.split('::');
  const head = left ? left.split(':') : [];
  const tail = right === undefined ? [] : right ? right.split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (right === undefined ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(right === undefined ? 0 : missing).fill('0'), ...tail].map((g) => parseInt(g, 16));
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return undefined;
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

function refusedV6(b: readonly number[]): string | undefined {
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4 = (at: number) => b.slice(at, at + 4);
  if (zeros(0, 16)) return 'unspecified';
  if (zeros(0, 15) && b[15] === 1) return 'loopback';
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated): the IPv4 address decides; a compatible one is refused anyway.
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return refusedV4(v4(12)) && `${refusedV4(v4(12))} (IPv4-mapped)`;
  if (zeros(0, 12)) return 'reserved (IPv4-compatible)';
  // 64:ff9b::/96, NAT64 of an IPv4 address; 64:ff9b:1::/48, local-use NAT64.
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) {
    if (zeros(4, 12)) return refusedV4(v4(12)) && `${refusedV4(v4(12))} (NAT64)`;
    if (b[4] === 0 && b[5] === 1) return 'private (local NAT64)';
  }
  // 6to4 (2002::/16) carries an IPv4 address in its next 32 bits.
  if (b[0] === 0x20 && b[1] === 0x02) return refusedV4(v4(2)) && `${refusedV4(v4(2))} (6to4)`;
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x0d && b[3] === 0xb8) return 'documentation';
  // Teredo (2001::/32) tunnels to an address it hides: refused.
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x00 && b[3] === 0x00) return 'reserved (Teredo)';
  if (b[0] === 0x01 && zeros(1, 8)) return 'reserved (discard)';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return 'link-local';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return 'private (site-local)';
  if ((b[0]! & 0xfe) === 0xfc) return 'unique-local';
  if (b[0] === 0xff) return 'multicast';
  return undefined;
}

/** Why a webhook may not reach this address (`loopback`, `private`, …), or undefined when it may. Not an IP address: refused. */
export function refusedAddress(address: string): string | undefined {
  if (net.isIPv4(address)) return refusedV4(address.split('.').map(Number));
  const v6 = ipv6Bytes(address);
  if (v6) return refusedV6(v6);
  return 'not an IP address';
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Looks a host name up (the seam tests replace: a DNS answer that changes between the check and the connection). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const found = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** A receiver the server will not send to (400 `webhook_url_refused` at create and update; a failed attempt when sending). */
export class WebhookUrlRefused extends Error {
  override name = 'WebhookUrlRefused';
}

/** The host of a URL as an address or a name (IPv6 brackets removed, a trailing dot kept). */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

export interface AddressPolicy {
  allowPrivate: boolean;
  resolve: Resolver;
}

/** Throws WebhookUrlRefused when a literal address is refused. */
export function checkLiteral(host: string, policy: Pick<AddressPolicy, 'allowPrivate'>): void {
  if (policy.allowPrivate || !net.isIP(host)) return;
  const why = refusedAddress(host);
  if (why) throw new WebhookUrlRefused(`${host} is a ${why} address`);
}

/**
 * The addresses `hostname` resolves to, when every one of them is allowed; throws
 * WebhookUrlRefused naming the first that is not (one refused answer refuses the name: a
 * connection could go to it).
 */
export async function resolveAllowed(hostname: string, policy: AddressPolicy): Promise<ResolvedAddress[]> {
  if (net.isIP(hostname)) {
    checkLiteral(hostname, policy);
    return [{ address: hostname, family: net.isIPv6(hostname) ? 6 : 4 }];
  }
  const found = await policy.resolve(hostname);
  if (!policy.allowPrivate) {
    for (const a of found) {
      const why = refusedAddress(a.address);
      if (why) throw new WebhookUrlRefused(`${hostname} resolves to ${a.address}, a ${why} address`);
    }
  }
  return found;
}

/**
 * The check at create and update: http or https, and a host that is (or resolves to) no
 * refused address. A name that does not resolve now is accepted: it is checked again at every
 * connection. Throws WebhookUrlRefused.
 */
export async function checkWebhookUrl(raw: string, policy: AddressPolicy, timeoutMs = 5000): Promise<void> {
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookUrlRefused(`${url.protocol} URLs are not sent to (http and https only)`);
  if (policy.allowPrivate) return;
  const host = hostOf(url);
  if (net.isIP(host)) return checkLiteral(host, policy);
  let timer: NodeJS.Timeout | undefined;
  // A refusal throws; a name that does not resolve, or not in time, passes (checked again at connect time).
  await Promise.race([
    resolveAllowed(host, policy).then(
      () => 'ok' as const,
      (err: unknown) => {
        if (err instanceof WebhookUrlRefused) throw err;
        return 'unresolved' as const;
      },
    ),
    new Promise<'slow'>((resolve) => (timer = setTimeout(() => resolve('slow'), timeoutMs))),
  ]).finally(() => clearTimeout(timer));
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `http.request`: resolves with the policy's resolver, refuses the name if any
 * answer is a refused address, and hands Node only the checked addresses, so the socket
 * connects to exactly what was checked (no second DNS query that could answer otherwise).
 */
export function guardedLookup(policy: AddressPolicy): (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void {
  return (hostname, options, callback) => {
    resolveAllowed(hostname, policy).then(
      (found) => {
        const wanted = options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : found;
        if (wanted.length === 0) {
          const err: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
          err.code = 'ENOTFOUND';
          return callback(err, '');
        }
        if (options.all) return callback(null, wanted.map((a) => ({ address: a.address, family: a.family })));
        callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: unknown) => callback(err as NodeJS.ErrnoException, ''),
    );
  };
}
