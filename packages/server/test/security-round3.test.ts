/**
 * Holes of the third security review (issue 46) in the fleet features: a key holder taking
 * over an approved board, failed enrolments neither throttled nor folded in the audit log,
 * an operator cancelling an admin's rollout step by step, NUL bytes and `__proto__` keys,
 * maintenance and `bad` boards swept into rollouts, and downloads following links out of
 * their folder. Each test failed before its fix (see docs/security.md).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boards } from '../src/db/schema.ts';
import { ENROLL_LIMITS } from '../src/enrollment/enroll-limiter.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { eventually } from '../../../test/support/eventually.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { ADMIN_TOKEN, bearer, call, makeUser, type TestUser } from './support/accounts.ts';
import { FakeAgent, tryConnect } from './support/fake-agent.ts';

const admin = bearer(ADMIN_TOKEN);

describe.each(dbKinds)('security round 3 (%s database)', (kind) => {
  let server: TestServer;
  let operator: TestUser;
  let packagesDir: string;
  let outside: string;
  let invocationId: number;
  /** Each test enrolls from its own address (MM_TRUST_PROXY), so the per-address limit of one does not touch another. */
  let address = 0;
  const nextAddress = () => `198.51.100.${++address}`;

  const enroll = (body: Record<string, unknown> | string, from: string) =>
    server.api('/api/agent/enroll/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const createKey = async (body: Record<string, unknown>) => {
    const res = await call(server, 'POST', '/api/provisioning-keys/', admin, body);
    expect(res.status, await res.clone().text()).toBe(201);
    return (await json(res)) as { id: string; key: string };
  };
  const board = async (id: string) => json(await call(server, 'GET', `/api/boards/${id}/`, admin));
  /** Whether the agent link opens with this token (`open`), else the refusal's status. */
  const linkWith = async (token: string) => {
    const r = await tryConnect(server.url, token);
    if ('ws' in r) {
      r.ws.close();
      return 'open';
    }
    return r.refused.status;
  };
  /** A JSON body sent as these exact bytes (JSON.stringify drops a `__proto__` key of an object literal). */
  const raw = (method: string, pathname: string, body: string, auth: Record<string, string> = admin) =>
    server.api(pathname, { method, headers: { ...auth, 'content-type': 'application/json' }, body });

  beforeAll(async () => {
    const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-round3-'));
    packagesDir = path.join(tmp, 'packages');
    outside = path.join(tmp, 'beside');
    await fs.mkdir(packagesDir);
    await fs.mkdir(outside);
    server = await startTestServer(kind, { MM_API_TOKEN: ADMIN_TOKEN, MM_TRUST_PROXY: '1', MM_PACKAGES_DIR: packagesDir });
    operator = await makeUser(server, 'round3-operator', 'operator');
    invocationId = (await json(await call(server, 'POST', '/api/invocations/create/', admin, { name: 'round3', description: '' }))).id;
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await fs.rm(path.dirname(packagesDir), { recursive: true, force: true });
  });

  describe('hole 1: re-enrolment must prove it is the board', () => {
    it('a manual key: re-enrolling an approved, connected board is held for a new approval; the board keeps its token and link', async () => {
      const from = nextAddress();
      const key = await createKey({ name: 'manual', approval: 'manual', labels: { site: 'r3-manual' } });
      const first = await enroll({ key: key.key, machine_id: 'r3-machine-1', hostname: 'real-board' }, from);
      expect(first.status).toBe(202);
      const boardId = (await json(first)).board_id as string;
      expect((await call(server, 'POST', `/api/boards/${boardId}/approve/`, admin)).status).toBe(200);
      const issued = await enroll({ key: key.key, machine_id: 'r3-machine-1', hostname: 'real-board' }, from);
      expect(issued.status).toBe(201);
      const token = (await json(issued)).token as string;
      const real = await FakeAgent.online(server.url, token);

      // Someone else with the key and the (not secret) machine id.
      const attacker = await enroll({ key: key.key, machine_id: 'r3-machine-1', hostname: 'impostor' }, nextAddress());
      expect(attacker.status).toBe(202);
      expect(await json(attacker)).toEqual({ board_id: boardId, status: 'pending' });
      expect(attacker.headers.get('retry-after')).not.toBeNull();
      // Nothing changed for the real board: still online, still linked, its token still good.
      expect(real.closeCode).toBeUndefined();
      const shown = await board(boardId);
      expect(shown.status).toBe('online');
      expect(shown.reenroll_request).toMatchObject({ hostname: 'impostor' });
      expect(await linkWith(token)).toBe('open');

      // Offline, it is still held: a manual key's board is replaced only with an admin's approval.
      await real.close();
      await eventually(async () => expect((await board(boardId)).status).toBe('offline'));
      expect((await enroll({ key: key.key, machine_id: 'r3-machine-1', hostname: 'impostor' }, nextAddress())).status).toBe(202);
      expect(await linkWith(token)).toBe('open');

      // An admin approves the re-enrolment: the next ask gets a new token, once; the old one stops working.
      const approved = await call(server, 'POST', `/api/boards/${boardId}/approve/`, admin);
      expect(approved.status).toBe(200);
      const replaced = await enroll({ key: key.key, machine_id: 'r3-machine-1', hostname: 'reinstalled' }, from);
      expect(replaced.status).toBe(201);
      const newToken = (await json(replaced)).token as string;
      expect(newToken).not.toBe(token);
      expect(await linkWith(token)).toBe(401);
      expect(await linkWith(newToken)).toBe('open');
      expect((await board(boardId)).reenroll_request).toBeNull();
      // The approval was used up: asking again without proof is held again.
      expect((await enroll({ key: key.key, machine_id: 'r3-machine-1', hostname: 'x' }, from)).status).toBe(202);
    });

    it('an auto key: a connected board is never unseated without its token; with its current token it gets a new one', async () => {
      const from = nextAddress();
      const key = await createKey({ name: 'auto', labels: { site: 'r3-auto' } });
      const first = await enroll({ key: key.key, machine_id: 'r3-machine-2', hostname: 'real' }, from);
      expect(first.status).toBe(201);
      const { board_id: boardId, token } = (await json(first)) as { board_id: string; token: string };
      const real = await FakeAgent.online(server.url, token);

      const attacker = await enroll({ key: key.key, machine_id: 'r3-machine-2', hostname: 'impostor' }, nextAddress());
      expect(attacker.status).toBe(202);
      expect(real.closeCode).toBeUndefined();
      expect((await board(boardId)).status).toBe('online');
      // A wrong token is no proof (and is not taken as one).
      expect((await enroll({ key: key.key, machine_id: 'r3-machine-2', hostname: 'impostor', token: 'x'.repeat(43) }, nextAddress())).status).toBe(202);
      expect(real.closeCode).toBeUndefined();

      // The board itself, with its current token: a new token at once, and the old link is closed.
      const rotated = await enroll({ key: key.key, machine_id: 'r3-machine-2', hostname: 'real', token }, from);
      expect(rotated.status).toBe(201);
      const body = await json(rotated);
      expect(body.board_id).toBe(boardId);
      expect(body.token).not.toBe(token);
      await real.closed;
      expect(await linkWith(token)).toBe(401);
    });

    it('an auto key: a reinstalled board (offline, its token lost) gets the same board and a new token', async () => {
      const from = nextAddress();
      const key = await createKey({ name: 'auto-reinstall' });
      const first = await json(await enroll({ key: key.key, machine_id: 'r3-machine-3', hostname: 'h' }, from));
      const agent = await FakeAgent.online(server.url, first.token);
      await agent.close();
      await eventually(async () => expect((await board(first.board_id)).status).toBe('offline'));
      const again = await enroll({ key: key.key, machine_id: 'r3-machine-3', hostname: 'h' }, from);
      expect(again.status).toBe(201);
      expect((await json(again)).board_id).toBe(first.board_id);
    });
  });

  describe('hole 3: failed enrolments are throttled per address and folded in the audit log', () => {
    it('40 wrong keys from one address: 429 after the limit, one audit row with a count; another address is not held', async () => {
      const from = nextAddress();
      const before = (await json(await call(server, 'GET', '/api/audit/?limit=1', admin))).total as number;
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) {
        const res = await enroll({ key: `mmk_guess-${i}`, machine_id: `m-${i}`, hostname: `h-${i}` }, from);
        statuses.push(res.status);
        if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
        await res.body?.cancel();
      }
      expect(statuses.slice(0, ENROLL_LIMITS.perAddress).every((s) => s === 401)).toBe(true);
      expect(statuses.slice(ENROLL_LIMITS.perAddress).every((s) => s === 429)).toBe(true);
      // Even a good key waits while the address is held (as a sign-in does).
      const key = await createKey({ name: 'good' });
      expect((await enroll({ key: key.key, machine_id: 'held', hostname: 'held' }, from)).status).toBe(429);
      expect((await enroll({ key: key.key, machine_id: 'elsewhere', hostname: 'elsewhere' }, nextAddress())).status).toBe(201);

      const audit = await json(await call(server, 'GET', '/api/audit/?limit=1000', admin));
      const mine = audit.events.filter((e: { ip: string }) => e.ip === from);
      const refused = mine.filter((e: { action: string }) => e.action === 'board.enroll_refused');
      expect(refused).toHaveLength(1);
      expect(refused[0].count).toBe(ENROLL_LIMITS.perAddress);
      const throttled = mine.filter((e: { action: string }) => e.action === 'board.enroll_throttled');
      expect(throttled).toHaveLength(1);
      expect(throttled[0].count).toBe(40 - ENROLL_LIMITS.perAddress + 1);
      // Two rows for 41 refusals (plus the key made and the other address's enrolment).
      expect(audit.total - before).toBeLessThanOrEqual(4);
    });
  });

  describe('hole 3, the same for an agent that waits', () => {
    it('a board asking again and again while it waits for approval is one audit entry with a count', async () => {
      const from = nextAddress();
      const key = await createKey({ name: 'waiting', approval: 'manual' });
      let boardId = '';
      for (let i = 0; i < 5; i++) {
        const res = await enroll({ key: key.key, machine_id: 'r3-waiting', hostname: 'waiting' }, from);
        expect(res.status).toBe(202);
        boardId = (await json(res)).board_id;
      }
      const audit = await json(await call(server, 'GET', '/api/audit/?action=board.enroll&limit=1000', admin));
      const mine = audit.events.filter((e: { target: string }) => e.target === `board ${boardId}`);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ count: 5, detail: { result: 'pending' } });
      // Its token, once approved, is an entry of its own.
      expect((await call(server, 'POST', `/api/boards/${boardId}/approve/`, admin)).status).toBe(200);
      expect((await enroll({ key: key.key, machine_id: 'r3-waiting', hostname: 'waiting' }, from)).status).toBe(201);
      const after = (await json(await call(server, 'GET', '/api/audit/?action=board.enroll&limit=1000', admin))).events.filter((e: { target: string }) => e.target === `board ${boardId}`);
      expect(after.map((e: { detail: { result: string } }) => e.detail.result)).toEqual(['token', 'pending']);
    });
  });

  describe('hole 4: steps of a rollout are cancelled with the rights the rollout needs', () => {
    it("an operator cannot cancel an admin rollout's step; an admin can; an operator may cancel an execute rollout's step", async () => {
      const b = await call(server, 'POST', '/api/boards/', admin, { name: 'r3-step-board' });
      expect(b.status).toBe(201);
      const boardId = (await json(b)).id as string;
      expect((await call(server, 'PATCH', `/api/boards/${boardId}/`, admin, { labels: { r3: 'steps' } })).status).toBe(200);
      const made = await call(server, 'POST', '/api/rollouts/', admin, { kind: 'pac_activate', board_selector: { r3: 'steps' }, params: { pac: 'p' } });
      expect(made.status).toBe(201);
      const rollout = await json(made);
      const stepId = rollout.boards[0].operation_id as number;
      expect(stepId).toBeGreaterThan(0);
      const refused = await call(server, 'POST', `/api/operations/${stepId}/cancel/`, bearer(operator.token));
      expect(refused.status).toBe(403);
      expect((await json(refused)).code).toBe('forbidden');
      expect((await json(await call(server, 'GET', `/api/operations/${stepId}/`, admin))).status).toBe('queued');
      expect((await call(server, 'POST', `/api/operations/${stepId}/cancel/`, admin)).status).toBe(202);

      const exec = await json(await call(server, 'POST', '/api/rollouts/', bearer(operator.token), { kind: 'execute', board_selector: { r3: 'steps' }, invocation_id: invocationId }));
      const execStep = exec.boards[0].operation_id as number;
      expect((await call(server, 'POST', `/api/operations/${execStep}/cancel/`, bearer(operator.token))).status).toBe(202);
      await call(server, 'DELETE', `/api/boards/${boardId}/`, admin);
    });
  });

  describe('hole 5: NUL in enrolment facts', () => {
    it('is a 400 and takes no place of the key', async () => {
      const from = nextAddress();
      const key = await createKey({ name: 'one place', max_boards: 1 });
      for (const facts of [{ os: 'Ubuntu\u0000' }, { 'a\u0000b': 1 }, { nested: { deeper: ['x', 'y\u0000'] } }]) {
        const res = await enroll({ key: key.key, machine_id: 'nul-machine', hostname: 'nul', facts }, from);
        expect(res.status, JSON.stringify(facts)).toBe(400);
        expect((await json(res)).code).toBe('validation_failed');
      }
      const keys = (await json(await call(server, 'GET', '/api/provisioning-keys/?limit=1000', admin))).provisioning_keys;
      expect(keys.find((k: { id: string }) => k.id === key.id).boards_enrolled).toBe(0);
      expect((await enroll({ key: key.key, machine_id: 'real-machine', hostname: 'real', facts: { os: 'Ubuntu' } }, from)).status).toBe(201);
    });

    it('one machine enrolling many times at once takes one place', async () => {
      const from = nextAddress();
      const key = await createKey({ name: 'two places', max_boards: 2 });
      const answers = await Promise.all(Array.from({ length: 8 }, () => enroll({ key: key.key, machine_id: 'racing-machine', hostname: 'racer' }, from)));
      const statuses = answers.map((r) => r.status);
      await Promise.all(answers.map((r) => r.body?.cancel()));
      expect(statuses).toContain(201);
      const keys = (await json(await call(server, 'GET', '/api/provisioning-keys/?limit=1000', admin))).provisioning_keys;
      expect(keys.find((k: { id: string }) => k.id === key.id).boards_enrolled).toBe(1);
      expect((await enroll({ key: key.key, machine_id: 'second-machine', hostname: 'second' }, from)).status).toBe(201);
    });
  });

  describe('hole 6: `__proto__` and other keys that break the label rules', () => {
    it('is a 400 everywhere a selector or labels are taken, and nothing is created', async () => {
      const proto = '{"__proto__":"nomatch"}';
      const opsBefore = (await json(await call(server, 'GET', '/api/operations/?limit=1', admin))).total;
      const execute = await raw('POST', `/api/invocations/${invocationId}/execute/`, `{"board_selector":${proto}}`, { ...bearer(operator.token), prefer: 'respond-async' });
      expect(execute.status).toBe(400);
      expect((await json(await call(server, 'GET', '/api/operations/?limit=1', admin))).total).toBe(opsBefore);
      const rollout = await raw('POST', '/api/rollouts/', `{"kind":"execute","invocation_id":${invocationId},"board_selector":${proto}}`, bearer(operator.token));
      expect(rollout.status).toBe(400);
      const check = await raw('POST', '/api/health-checks/', `{"name":"c","invocation_id":${invocationId},"interval_s":60,"board_selector":${proto}}`);
      expect(check.status).toBe(400);
      const keyLabels = await raw('POST', '/api/provisioning-keys/', `{"name":"k","labels":${proto}}`);
      expect(keyLabels.status).toBe(400);
      const b = await json(await call(server, 'POST', '/api/boards/', admin, { name: 'r3-proto' }));
      const patch = await raw('PATCH', `/api/boards/${b.id}/`, `{"labels":${proto}}`);
      expect(patch.status).toBe(400);
      for (const q of ['__proto__=x', 'constructor=x&label=__proto__=y']) {
        const list = await call(server, 'GET', `/api/boards/?label=${q}`, admin);
        expect(list.status, q).toBe(400);
      }
      // A selector on `constructor` (a fine key) matches only boards that have that label.
      const none = await raw('POST', `/api/invocations/${invocationId}/execute/`, '{"board_selector":{"constructor":"x"}}', bearer(operator.token));
      expect(none.status).toBe(400);
      expect((await json(none)).code).toBe('no_matching_board');
      for (const body of [`{"board_selector":{"ok":"1","__proto__":{"x":"y"}}}`, '{"board_selector":{"Upper":"1"}}']) {
        expect((await raw('POST', `/api/invocations/${invocationId}/execute/`, body, bearer(operator.token))).status, body).toBe(400);
      }
      await call(server, 'DELETE', `/api/boards/${b.id}/`, admin);
    });
  });

  describe("hole 7: NUL in a health check's name", () => {
    it('is a 400', async () => {
      const res = await call(server, 'POST', '/api/health-checks/', admin, { name: 'fps\u0000', invocation_id: invocationId, interval_s: 60, board_selector: {} });
      expect(res.status).toBe(400);
      expect((await json(res)).code).toBe('validation_failed');
    });
  });

  describe('hole 8: maintenance and bad boards are left out of rollouts unless asked for', () => {
    it('leaves them out, says who was left out and why, and takes them when the request says so', async () => {
      const make = async (name: string) => {
        const res = await call(server, 'POST', '/api/boards/', admin, { name });
        const id = (await json(res)).id as string;
        expect((await call(server, 'PATCH', `/api/boards/${id}/`, admin, { labels: { r3: 'fleet' } })).status).toBe(200);
        return id;
      };
      const fine = await make('r3-fine');
      const repair = await make('r3-repair');
      const bad = await make('r3-bad');
      expect((await call(server, 'PATCH', `/api/boards/${repair}/`, admin, { maintenance: true })).status).toBe(200);
      await server.ctx.database.db.update(boards).set({ health: 'bad', healthReason: 'fps 1 < min 10' }).where(eq(boards.id, bad));

      const res = await call(server, 'POST', '/api/rollouts/', bearer(operator.token), { kind: 'execute', board_selector: { r3: 'fleet' }, invocation_id: invocationId });
      expect(res.status).toBe(201);
      const r = await json(res);
      expect(r.boards.map((x: { board_id: string }) => x.board_id)).toEqual([fine]);
      expect(r.left_out).toEqual([
        { board_id: bad, board_name: 'r3-bad', reason: 'bad' },
        { board_id: repair, board_name: 'r3-repair', reason: 'maintenance' },
      ]);
      expect((await json(await call(server, 'GET', `/api/rollouts/${r.id}/`, admin))).left_out).toHaveLength(2);
      await call(server, 'POST', `/api/rollouts/${r.id}/cancel/`, admin);

      const all = await json(
        await call(server, 'POST', '/api/rollouts/', bearer(operator.token), { kind: 'execute', board_selector: { r3: 'fleet' }, invocation_id: invocationId, include_maintenance: true, include_bad: true }),
      );
      expect(all.boards.map((x: { board_id: string }) => x.board_id).sort()).toEqual([fine, repair, bad].sort());
      expect(all.left_out).toEqual([]);
      await call(server, 'POST', `/api/rollouts/${all.id}/cancel/`, admin);

      // Only held boards match: nothing is created, and the answer says why and how to include them.
      expect((await call(server, 'PATCH', `/api/boards/${fine}/`, admin, { maintenance: true })).status).toBe(200);
      const none = await call(server, 'POST', '/api/rollouts/', bearer(operator.token), { kind: 'execute', board_selector: { r3: 'fleet' }, invocation_id: invocationId });
      expect(none.status).toBe(400);
      const problem = await json(none);
      expect(problem.code).toBe('no_matching_board');
      expect(problem.detail).toMatch(/include_maintenance/);
      for (const id of [fine, repair, bad]) await call(server, 'DELETE', `/api/boards/${id}/`, admin);
    });
  });

  describe('hole 9: downloads serve only regular files inside MM_PACKAGES_DIR', () => {
    it('neither lists nor serves links that point out; a link inside is served; a 404 names no folder', async () => {
      await fs.writeFile(path.join(outside, 'secret.deb'), 'not for you');
      await fs.symlink(path.join(outside, 'secret.deb'), path.join(packagesDir, 'mm-agent_9.9.9_arm64.deb'));
      await fs.symlink('../beside/secret.deb', path.join(packagesDir, 'mm-agent_9.9.8_amd64.deb'));
      await fs.writeFile(path.join(packagesDir, 'mm-agent_1.0.0_arm64.deb'), 'a real package');
      await fs.symlink('mm-agent_1.0.0_arm64.deb', path.join(packagesDir, 'mm-agent_1.0.0_amd64.deb'));

      const list = await json(await server.api('/api/downloads/'));
      const names = list.downloads.map((d: { name: string }) => d.name);
      expect(names).not.toContain('mm-agent_9.9.9_arm64.deb');
      expect(names).not.toContain('mm-agent_9.9.8_amd64.deb');
      expect(names).toEqual(expect.arrayContaining(['mm-agent_1.0.0_arm64.deb', 'mm-agent_1.0.0_amd64.deb']));
      for (const name of ['mm-agent_9.9.9_arm64.deb', 'mm-agent_9.9.8_amd64.deb']) {
        const res = await server.api(`/api/downloads/${name}`);
        expect(res.status, name).toBe(404);
        expect(await res.text()).not.toContain('not for you');
      }
      expect(await (await server.api('/api/downloads/SHA256SUMS')).text()).not.toContain('9.9.');
      expect(await (await server.api('/api/downloads/mm-agent_1.0.0_amd64.deb')).text()).toBe('a real package');

      const unknown = await server.api('/api/downloads/nothing-here.deb');
      expect(unknown.status).toBe(404);
      const body = await unknown.text();
      expect(body).toContain('download_not_found');
      expect(body).not.toContain(packagesDir);
      expect(JSON.stringify(list.missing)).not.toContain(packagesDir);
    });
  });
});
