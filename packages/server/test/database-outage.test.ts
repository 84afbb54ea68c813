/**
 * The database goes away when a cancel's grace timer fires (a TCP proxy in front of the real
 * PostgreSQL, cut and restored): the server stays up, and the accepted cancel lands once the
 * database is back. Real PostgreSQL only: the embedded database cannot be cut.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, skipWithoutRealDatabase } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation } from './invocations-support.ts';
import { registerBoard } from './support/boards.ts';
import { FakeAgent } from './support/fake-agent.ts';

/** A TCP proxy that can be cut (every connection dropped, new ones refused) and restored. */
async function cuttableProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = net.connect(target);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      cut = false;
    },
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

describe.skipIf(skipWithoutRealDatabase('a database outage through a cuttable proxy'))('a database outage (postgres database)', () => {
  let server: TestServer;
  let proxy: Awaited<ReturnType<typeof cuttableProxy>>;
  beforeAll(async () => {
    const scratch = await createScratchDatabase();
    const url = new URL(scratch.url);
    proxy = await cuttableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    server = await startTestServer('postgres', { DATABASE_URL: url.toString(), MM_CANCEL_GRACE_S: '1' }, { scratchDatabase: scratch });
  });
  afterAll(async () => {
    proxy?.restore();
    await server?.stop();
    await proxy?.close();
  });

  /** A fake agent's board running an execute (op.start received). */
  const startedExecute = async (name: string) => {
    const b = await registerBoard(server, name);
    const agent = await FakeAgent.online(server.url, b.token);
    const inv = await createInvocation(server, name);
    const headers = { 'content-type': 'application/json', prefer: 'respond-async' };
    const op = await json(await server.api(`/api/invocations/${inv}/execute/`, { method: 'POST', headers, body: JSON.stringify({ board_id: b.id }) }));
    await agent.next('op.start', (m) => m.op_id === op.id);
    return { agent, op };
  };

  it("keeps the server up when the database is away as a cancel's grace runs out, and stores the cancel once it is back", async () => {
    const { agent, op } = await startedExecute('outage');
    const cancel = await server.api(`/api/operations/${op.id}/cancel/`, { method: 'POST' });
    expect(cancel.status).toBe(202);
    await agent.next('op.cancel', (m) => m.op_id === op.id);
    // The board never confirms; the database is gone when the 1 s grace runs out.
    proxy.cut();
    await new Promise((r) => setTimeout(r, 2500));
    const during = await server.api('/api/health/');
    expect(during.status).toBeLessThan(600); // the process answers at all
    proxy.restore();
    const deadline = Date.now() + 20_000;
    let status = '';
    while (Date.now() < deadline) {
      const res = await server.api(`/api/operations/${op.id}/`);
      if (res.ok) {
        status = (await json(res)).status;
        if (status === 'cancelled') break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe('cancelled');
    const ended = await json(await server.api(`/api/operations/${op.id}/`));
    expect(ended.error.message).toMatch(/did not confirm in time/);
    expect((await server.api('/api/health/')).status).toBe(200);
    await agent.close();
  });

  it('stores an outcome the board sent while the database was away once it is back, on the same link', async () => {
    const { agent, op } = await startedExecute('outage-outcome');
    proxy.cut();
    // The agent sends an outcome once; it sends it again only when it reconnects, and this link stays up.
    agent.send({ type: 'op.result', outcome: agent.outcome(op.id, 'failed', { error: { code: 'runner_failed', message: 'exit 3' } }) });
    await new Promise((r) => setTimeout(r, 1500));
    proxy.restore();
    await agent.next('op.result.ack', (m) => m.op_id === op.id, 20_000);
    const ended = await json(await server.api(`/api/operations/${op.id}/`));
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'runner_failed' } });
    // Settled on the link the outcome came on: it was never closed.
    expect(await Promise.race([agent.closed.then(() => 'closed'), new Promise((r) => setTimeout(() => r('open'), 50))])).toBe('open');
    await agent.close();
  });
});
