/**
 * A board that floods invalid messages and never reads its socket (issue 27, hole 1). By
 * hand, prints figures; not a test (the tests are packages/protocol/test/link-peer.test.ts
 * and packages/server/test/agent-link-flood.test.ts):
 *
 *   npx tsx bench/agent-link-flood.ts [--messages 20000] [--type-kib 16]
 *
 * Starts the control plane as a process (embedded database), registers a board, opens its
 * link with a raw `ws` client, stops reading, and sends `--messages` messages of an unknown
 * type `--type-kib` KiB long. Prints the server's RSS before, at its peak and 5 s after,
 * how the link ended and how many warn lines the server wrote.
 */
import fs from 'node:fs/promises';
import type net from 'node:net';
import WebSocket from 'ws';
import { AGENT_CONNECT_PATH } from '@mm/protocol';
import { serverCluster } from '../test/support/processes.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const messages = arg('--messages', 20_000);
const typeKiB = arg('--type-kib', 16);
const MiB = 1024 * 1024;

async function rssOf(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

const cluster = await serverCluster('embedded');
try {
  const server = await cluster.start();
  const board = (await (await server.api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'flood' }) })).json()) as { token: string };
  await new Promise((r) => setTimeout(r, 2000));
  const before = await rssOf(server.pid);
  const ws = new WebSocket(new URL(AGENT_CONNECT_PATH, server.url.replace(/^http/, 'ws')), { headers: { authorization: `Bearer ${board.token}` } });
  await new Promise<void>((resolve, reject) => ws.once('open', () => resolve()).once('error', reject));
  (ws as unknown as { _socket: net.Socket })._socket.pause();
  let closeCode: number | undefined;
  ws.on('close', (code) => (closeCode = code));
  ws.on('error', () => {});
  const warnsBefore = server.output.lines.filter((l) => l.level === 40).length;
  let peak = before;
  const sampler = setInterval(() => void rssOf(server.pid).then((r) => (peak = Math.max(peak, r)), () => {}), 50);
  const body = JSON.stringify({ type: 'x'.repeat(typeKiB * 1024) });
  const started = Date.now();
  let sent = 0;
  for (; sent < messages && ws.readyState === WebSocket.OPEN; sent++) {
    ws.send(body);
    // Keep the client's own queue short: what piles up must be the server's.
    while (ws.bufferedAmount > 8 * MiB && ws.readyState === WebSocket.OPEN) await new Promise((r) => setTimeout(r, 5));
  }
  const floodMs = Date.now() - started;
  await new Promise((r) => setTimeout(r, 5000));
  clearInterval(sampler);
  const after = await rssOf(server.pid);
  (ws as unknown as { _socket: net.Socket })._socket.resume();
  await new Promise((r) => setTimeout(r, 1000));
  const warns = server.output.lines.filter((l) => l.level === 40).length - warnsBefore;
  console.log(`sent ${sent} of ${messages} messages (${typeKiB} KiB type each) in ${floodMs} ms`);
  console.log(`server RSS: before ${(before / MiB).toFixed(0)} MiB, peak ${(peak / MiB).toFixed(0)} MiB (+${((peak - before) / MiB).toFixed(0)}), 5 s after ${(after / MiB).toFixed(0)} MiB (+${((after - before) / MiB).toFixed(0)})`);
  console.log(`link: ${closeCode === undefined ? 'still open' : `closed ${closeCode}`}; server warn lines: ${warns}`);
  ws.terminate();
} finally {
  await cluster.cleanup();
}
