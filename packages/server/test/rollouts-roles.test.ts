import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { ADMIN_TOKEN, bearer, call, makeUser, type TestUser } from './support/accounts.ts';

/**
 * Who may start and steer a rollout (docs/rollouts.md): an operator may run an invocation on
 * many boards; the kinds that change boards (PACs, scripts, agent updates) need an admin.
 * Refused requests create nothing. No agent needed: the steps wait queued for their board.
 */
describe('rollout roles (embedded database)', () => {
  let server: TestServer;
  let operator: TestUser;
  let invocationId: number;

  beforeAll(async () => {
    server = await startTestServer('embedded', { MM_API_TOKEN: ADMIN_TOKEN });
    operator = await makeUser(server, 'otto', 'operator');
    expect((await call(server, 'POST', '/api/boards/', bearer(ADMIN_TOKEN), { name: 'offline-board' })).status).toBe(201);
    invocationId = (await json(await call(server, 'POST', '/api/invocations/create/', bearer(ADMIN_TOKEN), { name: 'x', description: '' }))).id;
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('an operator may not start a pac_activate rollout (403, nothing created), nor steer an admin one', async () => {
    const refused = await call(server, 'POST', '/api/rollouts/', bearer(operator.token), { kind: 'pac_activate', board_selector: {}, params: { pac: 'p' } });
    expect(refused.status).toBe(403);
    expect((await json(await call(server, 'GET', '/api/rollouts/', bearer(operator.token)))).total).toBe(0);

    const byAdmin = await call(server, 'POST', '/api/rollouts/', bearer(ADMIN_TOKEN), { kind: 'pac_activate', board_selector: {}, params: { pac: 'p' } });
    expect(byAdmin.status).toBe(201);
    const rollout = await json(byAdmin);
    expect(rollout).toMatchObject({ status: 'running', created_by: 'MM_API_TOKEN', boards: [{ board_name: 'offline-board', status: 'queued' }] });
    expect((await call(server, 'POST', `/api/rollouts/${rollout.id}/cancel/`, bearer(operator.token))).status).toBe(403);
    const cancelled = await call(server, 'POST', `/api/rollouts/${rollout.id}/cancel/`, bearer(ADMIN_TOKEN));
    expect(cancelled.status).toBe(202);
    // The queued step was cancelled, so the rollout has finished.
    expect(await json(cancelled)).toMatchObject({ status: 'cancelled', boards: [{ status: 'cancelled' }] });
    expect((await json(await call(server, 'GET', `/api/rollouts/${rollout.id}/`, bearer(operator.token)))).finished_at).not.toBeNull();
  });

  it('an operator may run an invocation on many boards, and pause and cancel it', async () => {
    const res = await call(server, 'POST', '/api/rollouts/', bearer(operator.token), { kind: 'execute', board_selector: {}, invocation_id: invocationId });
    expect(res.status).toBe(201);
    const r = await json(res);
    expect(r.created_by).toBe('otto');
    expect((await call(server, 'POST', `/api/rollouts/${r.id}/pause/`, bearer(operator.token))).status).toBe(202);
    expect((await call(server, 'POST', `/api/rollouts/${r.id}/cancel/`, bearer(operator.token))).status).toBe(202);
  });
});
