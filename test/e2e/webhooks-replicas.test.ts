/**
 * A webhook delivery survives the replica sending it (docs/webhooks.md, "Several replicas"):
 * two control planes on one PostgreSQL and one data folder; the receiver holds the first
 * request open, the replica that sent it is killed with SIGKILL mid-send, and the other
 * replica sends the delivery once the lease has run out: the same webhook-id, verified by
 * the standardwebhooks package, one delivery row, delivered. While the lease holds, the
 * other replica sends nothing (one replica sends a given delivery at a time).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebhookReceiver } from '../../packages/server/test/support/webhook-receiver.ts';
import { createScratchDatabase, realDatabaseUrl } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { eventually, serverCluster, type ServerCluster, type ServerProcess } from '../support/processes.ts';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 300_000 });

if (!realDatabaseUrl) console.warn('webhooks-replicas: skipped, it needs a real PostgreSQL (set DATABASE_URL or MM_TEST_DATABASE_URL)');

/** The process (of `pids`) that owns the TCP socket whose local port is `port` (Linux /proc). */
async function pidOwningLocalPort(port: number, pids: number[]): Promise<number | undefined> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await fs.readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const local = cols[1];
      if (local && parseInt(local.split(':').at(-1) ?? '', 16) === port) inodes.add(cols[9]!);
    }
  }
  for (const pid of pids) {
    const fds = await fs.readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const link = await fs.readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m && inodes.has(m[1]!)) return pid;
    }
  }
  return undefined;
}

describe.skipIf(!realDatabaseUrl)('a webhook delivery when the replica sending it dies', () => {
  const clusters: ServerCluster[] = [];
  let scratch: { url: string; drop(): Promise<void> };
  let sharedDir: string;
  let rx: WebhookReceiver;
  let replicas: ServerProcess[] = [];

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    scratch = await createScratchDatabase();
    sharedDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-webhook-replicas-'));
    const start = async (name: string) => {
      const cluster = await serverCluster('embedded', {
        DATABASE_URL: scratch.url,
        MM_DATA_DIR: sharedDir,
        MM_REPLICA_ID: name,
        MM_WEBHOOK_ALLOW_PRIVATE: '1',
        // One attempt may take 3 s, so a lease is 2 × 3 + 5 = 11 s.
        MM_WEBHOOK_TIMEOUT_S: '3',
        MM_WEBHOOK_RETRY_BASE_S: '0.1',
      });
      clusters.push(cluster);
      return cluster.start();
    };
    replicas = [await start('replica-a'), await start('replica-b')];
  });

  afterAll(async () => {
    for (const c of clusters) await c.cleanup();
    await scratch?.drop();
    await rx?.close();
    if (sharedDir) await fs.rm(sharedDir, { recursive: true, force: true });
  });

  it('is sent again by the other replica after the lease, once, with the same webhook-id', async () => {
    const [A, B] = replicas as [ServerProcess, ServerProcess];
    const created = await A.api('/api/webhooks/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: rx.url('/kill'), events: ['board.enrolled'] }),
    });
    expect(created.status).toBe(201);
    const sub = (await json(created)) as { id: string; secret: string };
    rx.plan('/kill', 'hang', { status: 200 });

    // Any replica's board sweep notices the new board; exactly one stores the event.
    const board = await json(await B.api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'wh-replica' }) }));
    const [first] = await rx.waitFor('/kill', 1, 60_000);
    const sentAt = Date.now();
    // Which replica holds the connection the receiver is holding open: that one dies.
    const senderPid = await eventually(async () => {
      const pid = await pidOwningLocalPort(first!.remotePort, [A.pid, B.pid]);
      expect(pid).toBeDefined();
      return pid!;
    }, 5_000);
    const victim = senderPid === A.pid ? A : B;
    const survivor = victim === A ? B : A;
    await victim.kill();

    const [, second] = await rx.waitFor('/kill', 2, 60_000);
    // Not before the lease ran out: nobody else sent it meanwhile.
    expect(second!.at - sentAt).toBeGreaterThanOrEqual(11_000 - 3_000 - 1_000);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    for (const r of [first!, second!]) {
      const body = new Webhook(sub.secret).verify(r.body, {
        'webhook-id': String(r.headers['webhook-id']),
        'webhook-timestamp': String(r.headers['webhook-timestamp']),
        'webhook-signature': String(r.headers['webhook-signature']),
      }) as { type: string; data: { board: { id: string } } };
      expect(body.type).toBe('board.enrolled');
      expect(body.data.board.id).toBe(board.id);
    }
    const log = await eventually(async () => {
      const { deliveries } = await json(await survivor.api(`/api/webhooks/${sub.id}/deliveries/`));
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({ status: 'delivered', attempts: 2, last_status_code: 200 });
      return deliveries;
    }, 30_000);
    expect(log[0].event).toBe('board.enrolled');
    // Nothing more comes.
    await new Promise((r) => setTimeout(r, 1000));
    expect(rx.on('/kill')).toHaveLength(2);
  });
});
