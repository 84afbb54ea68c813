/**
 * The agent honours Retry-After: a control plane that refuses the link with 503
 * (`server_busy`) or 429 and a Retry-After is not asked again before that long. A real HTTP
 * server on loopback answers the upgrade requests; the gaps are measured where the requests
 * arrive, on the real clock, and only their lower bound is asserted.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerLink } from '../src/link/server-link.ts';
import { parseRetryAfterMs, retryAfterDelay } from '../src/link/backoff.ts';
import { startBareLink, waitUntil } from './support/agent-fixture.ts';

interface Refusal {
  status: number;
  retryAfter?: string;
}

/** Refuses every upgrade request with the next of `refusals` (the last one repeats); records when each came. */
async function refusingServer(refusals: Refusal[]) {
  const arrivals: number[] = [];
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (_req, socket) => {
    // The agent drops the socket as soon as it has read the answer.
    socket.on('error', () => {});
    arrivals.push(performance.now());
    const r = refusals[Math.min(arrivals.length - 1, refusals.length - 1)]!;
    const body = JSON.stringify({ type: 'about:blank', title: 'Busy', status: r.status, code: 'server_busy', detail: 'too many agents linking at once' });
    const retry = r.retryAfter === undefined ? '' : `retry-after: ${r.retryAfter}\r\n`;
    socket.end(
      `HTTP/1.1 ${r.status} Refused\r\ncontent-type: application/problem+json\r\n${retry}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, arrivals, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

function startLink(url: string, reconnectMaxDelayMs: number): ServerLink {
  // No jitter: without Retry-After every pause would be 0 ms.
  const link = startBareLink(url, { reconnectBaseMs: 100, reconnectMaxDelayMs, random: () => 0 });
  cleanup.push(() => link.stop());
  return link;
}

describe('Retry-After on a refused link', () => {
  it('waits at least Retry-After after a 503 or a 429 before the next attempt', async () => {
    const server = await refusingServer([
      { status: 503, retryAfter: '2' },
      { status: 429, retryAfter: '1' },
      { status: 503, retryAfter: '1' },
    ]);
    cleanup.push(server.close);
    startLink(server.url, 30_000);
    await waitUntil(() => server.arrivals.length >= 4, 'four attempts');
    const gaps = server.arrivals.slice(1, 4).map((t, i) => t - server.arrivals[i]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(2000);
    expect(gaps[1]).toBeGreaterThanOrEqual(1000);
    expect(gaps[2]).toBeGreaterThanOrEqual(1000);
  });

  it('caps a long Retry-After at the maximum backoff', async () => {
    // 600 s asked, 1 s cap: the second attempt comes long before the first would allow.
    const server = await refusingServer([{ status: 503, retryAfter: '600' }]);
    cleanup.push(server.close);
    startLink(server.url, 1000);
    await waitUntil(() => server.arrivals.length >= 2, 'a second attempt within the cap', 15_000);
    expect(server.arrivals[1]! - server.arrivals[0]!).toBeGreaterThanOrEqual(1000);
  });
});

describe('parseRetryAfterMs and retryAfterDelay', () => {
  it('reads delta-seconds and HTTP dates', () => {
    const now = Date.parse('Mon, 23 Nov 2026 22:00:00 GMT');
    expect(parseRetryAfterMs('3', now)).toBe(3000);
    expect(parseRetryAfterMs(' 0 ', now)).toBe(0);
    expect(parseRetryAfterMs('Mon, 23 Nov 2026 22:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfterMs('Mon, 23 Nov 2026 21:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined();
    expect(parseRetryAfterMs('soon', now)).toBeUndefined();
    expect(parseRetryAfterMs('-1', now)).toBeUndefined();
  });

  it('waits Retry-After plus up to half of it, capped, never below the ordinary backoff', () => {
    expect(retryAfterDelay(2000, 100, 30_000, () => 0)).toBe(2000);
    expect(retryAfterDelay(2000, 100, 30_000, () => 0.999)).toBe(2999);
    expect(retryAfterDelay(60_000, 100, 30_000, () => 0.5)).toBe(30_000);
    expect(retryAfterDelay(1000, 5000, 30_000, () => 0.5)).toBe(5000);
  });
});
