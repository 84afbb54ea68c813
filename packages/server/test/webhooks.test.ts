/**
 * Webhooks against a real receiving HTTP server (docs/webhooks.md): the subscription routes,
 * deliveries signed so that the `standardwebhooks` package verifies them, retries after 500s
 * and after a receiver that does not answer, Retry-After and backoff on a ManualClock, 410
 * turning the subscription off, redelivery with the same webhook-id, redirects not followed,
 * the Slack payload, the built-in events (board.enrolled, board.offline,
 * board.health_changed, operation.finished, rollout.finished), and the SSRF refusals of a
 * server without MM_WEBHOOK_ALLOW_PRIVATE: loopback, private, a name resolving to one, and
 * a DNS answer that changes between the check and the connection.
 */
import { ManualClock } from '@mm/protocol';
import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boards, rollouts, webhookBoardState, webhookSubscriptions } from '../src/db/schema.ts';
import type { OperationKind } from '../src/operations/kinds.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { eventually } from '../../../test/support/eventually.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { registerBoard } from './support/boards.ts';
import { FakeAgent } from './support/fake-agent.ts';
import { WebhookReceiver, type Received } from './support/webhook-receiver.ts';

const FAST = {
  MM_WEBHOOK_ALLOW_PRIVATE: '1',
  MM_WEBHOOK_TIMEOUT_S: '1',
  MM_WEBHOOK_RETRY_BASE_S: '0.05',
  MM_WEBHOOK_RETRY_MAX_S: '0.2',
  MM_WEBHOOK_OFFLINE_GRACE_S: '0.5',
  MM_PUBLIC_URL: 'https://mm.example.org',
};

const testKinds: Record<string, OperationKind> = {
  test_quick: { run: async () => ({ quick: true }) },
};

type Api = TestServer['api'];
const send = (api: Api, method: string, path: string, body?: unknown) =>
  api(path, { method, ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) });

async function subscribe(api: Api, body: Record<string, unknown>) {
  const res = await send(api, 'POST', '/api/webhooks/', body);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await json(res)) as { id: string; secret: string; url: string; events: string[]; format: string; enabled: boolean };
}

const deliveriesOf = async (api: Api, id: string) => (await json(await api(`/api/webhooks/${id}/deliveries/`))).deliveries as Array<Record<string, unknown>>;

/** Verifies a received request with the standardwebhooks package and returns its parsed body. */
function verified(secret: string, r: Received): { type: string; timestamp: string; data: Record<string, unknown> } {
  const headers = { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) };
  return new Webhook(secret).verify(r.body, headers) as { type: string; timestamp: string; data: Record<string, unknown> };
}

describe.each(dbKinds)('webhooks with a real receiver (%s database)', (kind) => {
  let server: TestServer;
  let rx: WebhookReceiver;
  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    server = await startTestServer(kind, FAST, { operationKinds: testKinds });
  });
  afterAll(async () => {
    await server?.stop();
    await rx?.close();
  });

  it('manages subscriptions: the secret shown once and stored sealed, 404s, bad input refused', async () => {
    const created = await subscribe(server.api, { url: rx.url('/crud'), events: ['rollout.finished', 'board.offline'] });
    expect(Object.keys(created).sort()).toEqual(['created_at', 'disabled_reason', 'enabled', 'events', 'format', 'id', 'secret', 'url']);
    expect(created).toMatchObject({ url: rx.url('/crud'), events: ['rollout.finished', 'board.offline'], format: 'standard', enabled: true, disabled_reason: null });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    const [row] = await server.ctx.database.db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, created.id));
    expect(row!.secretSealed).not.toContain(created.secret.slice(6));
    const got = await json(await server.api(`/api/webhooks/${created.id}/`));
    expect(got).not.toHaveProperty('secret');
    expect((await json(await server.api('/api/webhooks/'))).webhooks.map((w: { id: string }) => w.id)).toContain(created.id);

    const patched = await json(await send(server.api, 'PATCH', `/api/webhooks/${created.id}/`, { events: ['board.enrolled'], format: 'slack', enabled: false }));
    expect(patched).toMatchObject({ events: ['board.enrolled'], format: 'slack', enabled: false });
    expect((await send(server.api, 'PATCH', `/api/webhooks/${created.id}/`, { events: ['board.exploded'] })).status).toBe(400);
    expect((await send(server.api, 'POST', '/api/webhooks/', { url: rx.url(), events: [] })).status).toBe(400);
    expect((await send(server.api, 'POST', '/api/webhooks/', { url: 'ftp://example.org/', events: ['board.offline'] })).status).toBe(400);
    expect((await send(server.api, 'POST', '/api/webhooks/', { url: 'https://u:p@example.org/', events: ['board.offline'] })).status).toBe(400);
    expect((await send(server.api, 'POST', '/api/webhooks/', { url: rx.url(), events: ['board.offline'], secret: 'mine' })).status).toBe(400);
    expect((await server.api('/api/webhooks/', { method: 'POST', body: '{}' })).status).toBe(415);
    const missing = await server.api('/api/webhooks/0b6f3c1e-8d4a-4f51-9a43-2f0f2b1f7c11/');
    expect(missing.status).toBe(404);
    expect((await json(missing)).code).toBe('webhook_not_found');
    expect((await server.api('/api/webhooks/not-a-uuid/deliveries/')).status).toBe(404);
    expect((await send(server.api, 'DELETE', `/api/webhooks/${created.id}/`)).status).toBe(204);
    expect((await send(server.api, 'DELETE', `/api/webhooks/${created.id}/`)).status).toBe(404);
  });

  it('delivers a signed { type, timestamp, data } the standardwebhooks package verifies, and logs it', async () => {
    const sub = await subscribe(server.api, { url: rx.url('/signed'), events: ['regression.detected'] });
    const eventId = await server.ctx.webhooks.emit('regression.detected', { baseline: 'v1', summary: 'fps −12 %' });
    expect(eventId).toBeTruthy();
    const [r] = await rx.waitFor('/signed', 1);
    expect(r!.headers['content-type']).toBe('application/json');
    expect(r!.headers['user-agent']).toMatch(/^ModelManager-Webhooks\//);
    expect(r!.headers['webhook-id']).toBe(`msg_${eventId!.replace(/-/g, '')}`);
    expect(Math.abs(Number(r!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    const body = verified(sub.secret, r!);
    expect(body).toEqual({ type: 'regression.detected', timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), data: { baseline: 'v1', summary: 'fps −12 %' } });
    await eventually(async () => {
      const [d] = await deliveriesOf(server.api, sub.id);
      expect(d).toMatchObject({ event: 'regression.detected', event_id: eventId, status: 'delivered', attempts: 1, last_status_code: 200, next_attempt_at: null });
    });
    // Nobody wants it: nothing is stored, nothing sent.
    expect(await server.ctx.webhooks.emit('board.recovered', { board: { id: 'x' } })).toBeUndefined();
  });

  it('retries after 500s and after an answer that never comes, then delivers with the same webhook-id', async () => {
    const sub = await subscribe(server.api, { url: rx.url('/flaky'), events: ['regression.detected'] });
    rx.plan('/flaky', { status: 500, body: 'boom' }, 'hang', { status: 503, headers: { 'retry-after': '0' } }, { status: 204 });
    await server.ctx.webhooks.emit('regression.detected', { summary: 'flaky' });
    const got = await rx.waitFor('/flaky', 4, 30_000);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const r of got) expect(verified(sub.secret, r).data).toEqual({ summary: 'flaky' });
    await eventually(async () => {
      const [d] = await deliveriesOf(server.api, sub.id);
      expect(d).toMatchObject({ status: 'delivered', attempts: 4, last_status_code: 204 });
    });
  });

  it('turns the subscription off on 410 Gone; events after that are not queued for it; turning it on clears the reason', async () => {
    const sub = await subscribe(server.api, { url: rx.url('/gone'), events: ['regression.detected'] });
    rx.plan('/gone', { status: 410 });
    await server.ctx.webhooks.emit('regression.detected', { summary: 'first' });
    await eventually(async () => {
      const w = await json(await server.api(`/api/webhooks/${sub.id}/`));
      expect(w).toMatchObject({ enabled: false, disabled_reason: 'The receiver answered 410 Gone.' });
    });
    const [d] = await deliveriesOf(server.api, sub.id);
    expect(d).toMatchObject({ status: 'failed', attempts: 1, last_status_code: 410 });
    await server.ctx.webhooks.emit('regression.detected', { summary: 'second' });
    expect(await deliveriesOf(server.api, sub.id)).toHaveLength(1);
    expect(rx.on('/gone')).toHaveLength(1);
    const on = await json(await send(server.api, 'PATCH', `/api/webhooks/${sub.id}/`, { enabled: true }));
    expect(on).toMatchObject({ enabled: true, disabled_reason: null });
  });

  it('redelivers on request (202): the same webhook-id again, a new attempt counted; unknown deliveries are 404', async () => {
    const sub = await subscribe(server.api, { url: rx.url('/again'), events: ['regression.detected'] });
    await server.ctx.webhooks.emit('regression.detected', { summary: 'again' });
    const [first] = await rx.waitFor('/again', 1);
    const delivery = await eventually(async () => {
      const [d] = await deliveriesOf(server.api, sub.id);
      expect(d?.status).toBe('delivered');
      return d!;
    });
    const res = await server.api(`/api/webhooks/${sub.id}/deliveries/${delivery.id}/redeliver/`, { method: 'POST' });
    expect(res.status).toBe(202);
    expect(await json(res)).toMatchObject({ id: delivery.id, status: 'pending' });
    const [, second] = await rx.waitFor('/again', 2);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(verified(sub.secret, second!).data).toEqual({ summary: 'again' });
    await eventually(async () => expect((await deliveriesOf(server.api, sub.id))[0]).toMatchObject({ status: 'delivered', attempts: 2 }));
    expect((await server.api(`/api/webhooks/${sub.id}/deliveries/999999/redeliver/`, { method: 'POST' })).status).toBe(404);
    expect((await server.api(`/api/webhooks/${sub.id}/deliveries/abc/redeliver/`, { method: 'POST' })).status).toBe(404);
  });

  it('does not follow a redirect: the attempt fails with its status and the Location is never asked for', async () => {
    const sub = await subscribe(server.api, { url: rx.url('/moved'), events: ['regression.detected'] });
    rx.plan('/moved', { status: 302, headers: { location: rx.url('/elsewhere') } }, { status: 200 });
    await server.ctx.webhooks.emit('regression.detected', { summary: 'moved' });
    await rx.waitFor('/moved', 2);
    expect(rx.on('/elsewhere')).toHaveLength(0);
    await eventually(async () => expect((await deliveriesOf(server.api, sub.id))[0]).toMatchObject({ status: 'delivered', attempts: 2 }));
  });

  it('sends the Slack format: text, a mrkdwn section and a context line linking to MM_PUBLIC_URL', async () => {
    const sub = await subscribe(server.api, { url: rx.url('/slack'), events: ['board.offline'], format: 'slack' });
    await server.ctx.webhooks.emit('board.offline', { board: { id: 'b-1', name: 'kria-7', labels: {} }, offline_since: '2026-11-21T10:00:00.000Z' });
    const [r] = await rx.waitFor('/slack', 1);
    // Signed like any delivery.
    const body = verified(sub.secret, r!) as unknown as { text: string; blocks: Array<{ type: string; text?: { type: string; text: string }; elements?: Array<{ type: string; text: string }> }> };
    expect(Object.keys(body).sort()).toEqual(['blocks', 'text']);
    expect(body.text).toBe('Board kria-7 is offline since 2026-11-21T10:00:00.000Z');
    expect(body.blocks.map((b) => b.type)).toEqual(['section', 'context']);
    expect(body.blocks[0]!.text).toEqual({ type: 'mrkdwn', text: ':red_circle: Board *kria-7* is offline since 2026-11-21T10:00:00.000Z' });
    expect(body.blocks[1]!.elements![0]!.text).toMatch(/^<https:\/\/mm\.example\.org\/boards\/b-1\|Open in Model Manager> · board\.offline · /);
  });

  it('tells board.enrolled, board.offline after the grace period and board.health_changed from the boards themselves', async () => {
    const sub = await subscribe(server.api, { url: rx.url('/boards'), events: ['board.enrolled', 'board.offline', 'board.health_changed'] });
    const b = await registerBoard(server, 'wh-board');
    // Registering says nothing on the bus: the sweep is asked for now rather than in up to 5 s.
    server.ctx.webhooks.sources.soonBoards(0);
    const enrolled = await eventually(() => {
      const r = rx.on('/boards').map((x) => verified(sub.secret, x)).find((x) => x.type === 'board.enrolled' && (x.data.board as { id: string }).id === b.id);
      expect(r).toBeDefined();
      return r!;
    }, 30_000);
    expect(enrolled.data.board).toMatchObject({ id: b.id, name: 'wh-board', health: 'unknown' });

    const agent = await FakeAgent.online(server.url, b.token);
    await eventually(async () => expect((await json(await server.api(`/api/boards/${b.id}/`))).status).toBe('online'));
    await agent.close();
    const offline = await eventually(() => {
      const r = rx.on('/boards').map((x) => verified(sub.secret, x)).find((x) => x.type === 'board.offline');
      expect(r).toBeDefined();
      return r!;
    }, 30_000);
    expect(offline.data).toMatchObject({ board: { id: b.id, name: 'wh-board' }, offline_since: expect.any(String), grace_s: 1 });

    // A health check's verdict (as the fleet scheduler stores it).
    await server.ctx.database.db.update(boards).set({ health: 'bad', healthReason: 'fps 3 < min 10' }).where(eq(boards.id, b.id));
    server.ctx.webhooks.sources.soonBoards(0);
    const health = await eventually(() => {
      const r = rx.on('/boards').map((x) => verified(sub.secret, x)).find((x) => x.type === 'board.health_changed');
      expect(r).toBeDefined();
      return r!;
    }, 30_000);
    expect(health.data).toMatchObject({ board: { id: b.id }, health: 'bad', previous_health: 'unknown', reason: 'fps 3 < min 10' });
    // Each told once.
    const types = rx.on('/boards').map((x) => verified(sub.secret, x)).filter((x) => (x.data.board as { id: string }).id === b.id).map((x) => x.type);
    expect(types.sort()).toEqual(['board.enrolled', 'board.health_changed', 'board.offline']);
  });

  it('does not announce boards that joined while nobody listened, once someone subscribes', async () => {
    const quiet = await registerBoard(server, 'wh-quiet');
    // A sweep knows it (with nobody wanting board.enrolled: in bulk, told nothing).
    server.ctx.webhooks.sources.soonBoards(0);
    await eventually(async () => {
      const rows = await server.ctx.database.db.select().from(webhookBoardState).where(eq(webhookBoardState.boardId, quiet.id));
      expect(rows).toHaveLength(1);
    });
    const sub = await subscribe(server.api, { url: rx.url('/late'), events: ['board.enrolled'] });
    const loud = await registerBoard(server, 'wh-loud');
    server.ctx.webhooks.sources.soonBoards(0);
    await rx.waitFor('/late', 1);
    await new Promise((r) => setTimeout(r, 500));
    server.ctx.webhooks.sources.soonBoards(0);
    await new Promise((r) => setTimeout(r, 500));
    const told = rx.on('/late').map((x) => (verified(sub.secret, x).data.board as { id: string }).id);
    expect(told).toEqual([loud.id]);
  });

  it('tells operation.finished (with the board) and rollout.finished', async () => {
    const sub = await subscribe(server.api, { url: rx.url('/ops'), events: ['operation.finished', 'rollout.finished'] });
    const b = await registerBoard(server, 'wh-ops');
    const agent = await FakeAgent.online(server.url, b.token);
    const op = await server.ctx.operations.create({ kind: 'test_quick', boardId: b.id, params: {} });
    await server.ctx.operations.waitForEnd(op.id, 10_000);
    const finished = await eventually(() => {
      const r = rx.on('/ops').map((x) => verified(sub.secret, x)).find((x) => x.type === 'operation.finished');
      expect(r).toBeDefined();
      return r!;
    });
    expect(finished.data).toMatchObject({ operation: { id: op.id, kind: 'test_quick', status: 'succeeded', result: { quick: true } }, board: { id: b.id, name: 'wh-ops' } });
    await agent.close();

    // A rollout that just finished (its engine sets finished_at, then says it changed).
    const now = new Date();
    const [ro] = await server.ctx.database.db.insert(rollouts).values({ kind: 'execute', status: 'aborted', boardSelector: {}, finishedAt: now }).returning();
    server.ctx.bus.publish('rollout.changed', ro!.id, { rolloutId: ro!.id });
    const rolled = await eventually(() => {
      const r = rx.on('/ops').map((x) => verified(sub.secret, x)).find((x) => x.type === 'rollout.finished');
      expect(r).toBeDefined();
      return r!;
    });
    expect(rolled.data).toMatchObject({ status: 'aborted', rollout: { id: ro!.id, kind: 'execute', status: 'aborted', counts: expect.any(Object) }, failed_boards: [] });
    expect(rolled.data.rollout).not.toHaveProperty('boards');
  });
});

describe.each(dbKinds)('webhook backoff on the server’s clock (%s database)', (kind) => {
  let server: TestServer;
  let rx: WebhookReceiver;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    server = await startTestServer(kind, { MM_WEBHOOK_ALLOW_PRIVATE: '1', MM_WEBHOOK_RETRY_BASE_S: '60', MM_WEBHOOK_RETRY_MAX_S: '3600' }, { clock });
  });
  afterAll(async () => {
    await server?.stop();
    await rx?.close();
  });

  it('waits at most base·2^(n−1) after each failure, honours Retry-After, and sends nothing before the clock gets there', async () => {
    const sub = await subscribe(server.api, { url: rx.url('/clock'), events: ['regression.detected'] });
    rx.plan('/clock', { status: 500 }, { status: 500 }, { status: 503, headers: { 'retry-after': '600' } }, { status: 200 });
    await server.ctx.webhooks.emit('regression.detected', { summary: 'clock' });
    const pendingAfter = async (attempts: number) =>
      eventually(async () => {
        const [d] = await deliveriesOf(server.api, sub.id);
        expect(d).toMatchObject({ status: 'pending', attempts });
        return d!;
      }, 60_000);
    /** Moves the clock on in small steps until the receiver has `n` requests (the worker sleeps on this clock). */
    const advanceUntil = (n: number) =>
      eventually(async () => {
        if (rx.on('/clock').length < n) await clock.advanceAsync(1000);
        await new Promise((r) => setTimeout(r, 50));
        expect(rx.on('/clock')).toHaveLength(n);
      }, 90_000, 0);
    let dueAt = 0;
    for (const [n, cap] of [
      [1, 60_000],
      [2, 120_000],
    ] as const) {
      if (n > 1) await advanceUntil(n);
      else await rx.waitFor('/clock', 1);
      const d = await pendingAfter(n);
      dueAt = new Date(String(d.next_attempt_at)).getTime();
      const wait = dueAt - clock.now();
      expect(wait).toBeGreaterThanOrEqual(0);
      expect(wait).toBeLessThanOrEqual(cap);
      // Nothing is sent before its time (the worker's timers fire on the way)…
      if (wait > 1000) {
        await clock.advanceAsync(wait - 1000);
        await new Promise((r) => setTimeout(r, 300));
        expect(rx.on('/clock')).toHaveLength(n);
      }
      // …and it is once the clock gets there (the loop goes on).
    }
    await advanceUntil(3);
    expect(clock.now()).toBeGreaterThanOrEqual(dueAt);
    const d = await pendingAfter(3);
    // Retry-After: 600 s is longer than this backoff (≤ 240 s): it decides.
    const wait = new Date(String(d.next_attempt_at)).getTime() - clock.now();
    expect(wait).toBeGreaterThan(600_000 - 2000);
    expect(wait).toBeLessThanOrEqual(600_000);
    await clock.advanceAsync(wait - 1000);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.on('/clock')).toHaveLength(3);
    await advanceUntil(4);
    await eventually(async () => expect((await deliveriesOf(server.api, sub.id))[0]).toMatchObject({ status: 'delivered', attempts: 4 }));
  }, 180_000);
});

describe.each(dbKinds)('webhook receivers the server refuses (%s database, MM_WEBHOOK_ALLOW_PRIVATE unset)', (kind) => {
  let server: TestServer;
  let rx: WebhookReceiver;
  let rebindCalls = 0;
  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    server = await startTestServer(kind, { MM_WEBHOOK_TIMEOUT_S: '2', MM_WEBHOOK_RETRY_BASE_S: '3600' });
    server.ctx.webhooks.setResolver(async (host) => {
      const answers: Record<string, string[]> = {
        'public.test': ['93.184.216.34'],
        'inside.test': ['192.168.1.10'],
        'mixed.test': ['93.184.216.34', '::1'],
        'metadata.test': ['169.254.169.254'],
        localhost: ['127.0.0.1'],
      };
      // A DNS answer that changes: public when the URL is checked, loopback when the server connects.
      if (host === 'rebind.test') return [{ address: rebindCalls++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
      const found = answers[host];
      if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    });
  });
  afterAll(async () => {
    await server?.stop();
    await rx?.close();
  });

  const refusals: Array<[string, () => string, RegExp]> = [
    ['a loopback address', () => rx.url('/direct'), /127\.0\.0\.1 is a loopback address/],
    ['IPv6 loopback', () => `http://[::1]:${rx.port}/`, /::1 is a loopback address/],
    ['an IPv4-mapped IPv6 loopback', () => `http://[::ffff:127.0.0.1]:${rx.port}/`, /loopback \(IPv4-mapped\)/],
    ['a private address', () => 'http://10.1.2.3/hook', /private/],
    ['a CGNAT address', () => 'http://100.64.1.1/hook', /CGNAT/],
    ['the unspecified address', () => 'http://0.0.0.0/hook', /unspecified/],
    ['the metadata service', () => 'http://metadata.test/latest', /link-local/],
    ['a name resolving to a private address', () => 'https://inside.test/hook', /inside\.test resolves to 192\.168\.1\.10/],
    ['a name with one loopback answer among public ones', () => 'https://mixed.test/hook', /mixed\.test resolves to ::1/],
    ['localhost', () => `http://localhost:${rx.port}/`, /localhost resolves to 127\.0\.0\.1/],
  ];
  it.each(refusals)('refuses %s with 400 webhook_url_refused', async (_what, url, why) => {
    const res = await send(server.api, 'POST', '/api/webhooks/', { url: url(), events: ['board.offline'] });
    expect(res.status).toBe(400);
    const problem = await json(res);
    expect(problem.code).toBe('webhook_url_refused');
    expect(problem.detail).toMatch(why);
  });

  it('refuses an update to a private URL and keeps the old one', async () => {
    const sub = await subscribe(server.api, { url: 'https://public.test/hook', events: ['board.offline'] });
    const res = await send(server.api, 'PATCH', `/api/webhooks/${sub.id}/`, { url: 'http://192.168.0.1/' });
    expect(res.status).toBe(400);
    expect((await json(res)).code).toBe('webhook_url_refused');
    expect((await json(await server.api(`/api/webhooks/${sub.id}/`))).url).toBe('https://public.test/hook');
    await send(server.api, 'DELETE', `/api/webhooks/${sub.id}/`);
  });

  it('checks again at connect time: a name that answered a public address, then loopback, reaches nothing', async () => {
    rebindCalls = 0;
    const sub = await subscribe(server.api, { url: `http://rebind.test:${rx.port}/rebound`, events: ['regression.detected'] });
    expect(rebindCalls).toBe(1);
    await server.ctx.webhooks.emit('regression.detected', { summary: 'rebind' });
    const [d] = await eventually(async () => {
      const list = await deliveriesOf(server.api, sub.id);
      // The claim counts the attempt before it is made; its outcome is written after it.
      expect(list[0]).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null, last_error: expect.any(String) });
      return list;
    });
    expect(String(d!.last_error)).toMatch(/refused: rebind\.test resolves to 127\.0\.0\.1, a loopback address/);
    expect(rebindCalls).toBe(2);
    expect(rx.received).toHaveLength(0);
  });
});

describe.each(dbKinds)('a webhook attempt when the server stops (%s database)', (kind) => {
  it('is cut (stopping does not wait for a receiver that does not answer), recorded, and sent after the restart', async () => {
    const rx = await WebhookReceiver.start();
    // An attempt may take 300 s: a stop that waited for it would outlast this test.
    const env = { MM_WEBHOOK_ALLOW_PRIVATE: '1', MM_WEBHOOK_TIMEOUT_S: '300', MM_WEBHOOK_RETRY_BASE_S: '0.05', MM_WEBHOOK_RETRY_MAX_S: '0.1' };
    const first = await startTestServer(kind, env, { keep: true });
    let second: TestServer | undefined;
    try {
      const sub = await subscribe(first.api, { url: rx.url('/stop'), events: ['regression.detected'] });
      rx.plan('/stop', 'hang');
      await first.ctx.webhooks.emit('regression.detected', { summary: 'stopping' });
      await rx.waitFor('/stop', 1);
      await first.stop();
      second = await startTestServer(kind, { ...env, MM_DATA_DIR: first.dataDir }, first.scratchDatabase ? { scratchDatabase: first.scratchDatabase } : {});
      const [again] = (await rx.waitFor('/stop', 2)).slice(1);
      expect(again!.headers['webhook-id']).toBe(rx.on('/stop')[0]!.headers['webhook-id']);
      const [d] = await eventually(async () => {
        const list = await deliveriesOf(second!.api, sub.id);
        expect(list[0]).toMatchObject({ status: 'delivered', attempts: 2, last_status_code: 200 });
        return list;
      });
      expect(d).toBeDefined();
    } finally {
      await second?.stop();
      if (!second) await first.scratchDatabase?.drop();
      await import('node:fs/promises').then((fs) => fs.rm(first.dataDir, { recursive: true, force: true }));
      await rx.close();
    }
  }, 120_000);
});

describe('pruning old webhook events', () => {
  it('removes events older than the cutoff with nothing left to send, keeps those with a pending delivery', async () => {
    const server = await startTestServer('embedded', { MM_WEBHOOK_ALLOW_PRIVATE: '1', MM_WEBHOOK_RETRY_BASE_S: '3600' });
    try {
      const { pruneEvents } = await import('../src/webhooks/webhook-store.ts');
      const { webhookEvents, webhookDeliveries } = await import('../src/db/schema.ts');
      const db = server.ctx.database.db;
      // A receiver nobody listens on: its delivery stays pending.
      const sub = await subscribe(server.api, { url: 'http://127.0.0.1:9/never', events: ['regression.detected', 'board.recovered'] });
      const kept = await server.ctx.webhooks.emit('regression.detected', { summary: 'pending' });
      const done = await server.ctx.webhooks.emit('board.recovered', { board: { id: 'b' } });
      await db.update(webhookDeliveries).set({ status: 'delivered' }).where(eq(webhookDeliveries.eventId, done!));
      expect(await pruneEvents(db, new Date(Date.now() - 60_000))).toBe(0);
      expect(await pruneEvents(db, new Date(Date.now() + 60_000))).toBe(1);
      const left = await db.select({ id: webhookEvents.id }).from(webhookEvents);
      expect(left.map((e) => e.id)).toEqual([kept]);
      expect((await deliveriesOf(server.api, sub.id)).map((d) => d.event)).toEqual(['regression.detected']);
    } finally {
      await server.stop();
    }
  });
});
