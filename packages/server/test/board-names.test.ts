/**
 * Issue 39, item 4: board names are unique (409 `board_name_taken` on registration and
 * PATCH), a board enrolled with a key is named `<hostname>-<first 6 of its machine id>` (or
 * its serial), and the pending list shows machine id, host name, address and time. The
 * migration renames boards that shared a name before, deterministically.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsFolder } from '../src/db/database.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { ADMIN_TOKEN, bearer, call } from './support/accounts.ts';

const admin = bearer(ADMIN_TOKEN);

describe.each(dbKinds)('unique board names (%s database)', (kind) => {
  let server: TestServer;
  let address = 0;
  const enroll = (body: Record<string, unknown>) =>
    server.api('/api/agent/enroll/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `203.0.113.${++address}` },
      body: JSON.stringify(body),
    });
  const createKey = async (body: Record<string, unknown>) => {
    const res = await call(server, 'POST', '/api/provisioning-keys/', admin, body);
    expect(res.status, await res.clone().text()).toBe(201);
    return (await json(res)) as { id: string; key: string };
  };
  const board = async (id: string) => json(await call(server, 'GET', `/api/boards/${id}/`, admin));

  beforeAll(async () => {
    server = await startTestServer(kind, { MM_API_TOKEN: ADMIN_TOKEN, MM_TRUST_PROXY: '1' });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('a registration or a rename to a taken name is 409 board_name_taken; a rename to a free name or its own works', async () => {
    const a = await call(server, 'POST', '/api/boards/', admin, { name: 'lab-a' });
    expect(a.status).toBe(201);
    const made = await json(a);
    const aId = made.id as string;
    // No MM_PUBLIC_URL here: the install command names the loopback address it was asked at, and says so.
    expect(made.install_command).toContain(server.url);
    expect(made.install_warning).toMatch(/MM_PUBLIC_URL is not set.*cannot reach/);
    const key = await call(server, 'POST', '/api/provisioning-keys/', admin, { name: 'warned' });
    expect((await json(key)).install_warning).toMatch(/MM_PUBLIC_URL is not set/);
    const again = await call(server, 'POST', '/api/boards/', admin, { name: 'lab-a' });
    expect(again.status).toBe(409);
    expect(await json(again)).toMatchObject({ code: 'board_name_taken' });
    const b = await call(server, 'POST', '/api/boards/', admin, { name: 'lab-b' });
    const bId = (await json(b)).id as string;
    const taken = await call(server, 'PATCH', `/api/boards/${bId}/`, admin, { name: 'lab-a' });
    expect(taken.status).toBe(409);
    expect(await json(taken)).toMatchObject({ code: 'board_name_taken' });
    expect((await board(bId)).name).toBe('lab-b');
    expect((await call(server, 'PATCH', `/api/boards/${aId}/`, admin, { name: 'lab-a' })).status).toBe(200);
    expect((await call(server, 'PATCH', `/api/boards/${bId}/`, admin, { name: 'lab-c' })).status).toBe(200);
    expect((await board(bId)).name).toBe('lab-c');
    // A registered board has no enrolment.
    expect(await board(aId)).toMatchObject({ machine_id: null, enrolled_from: null, enrolled_at: null });
  });

  it('enrolled boards of one host name get `<hostname>-<first 6 of the machine id>`, or their serial; renamed freely after', async () => {
    const key = await createKey({ name: 'names', labels: { site: 'lab-1' } });
    const one = await enroll({ key: key.key, machine_id: '0f1e2d3c4b5a69788796a5b4c3d2e1f0', hostname: 'vm' });
    const two = await enroll({ key: key.key, machine_id: 'abcdef0123456789abcdef0123456789', hostname: 'vm' });
    const three = await enroll({ key: key.key, machine_id: '99999999aaaa', hostname: 'vm', facts: { serial: 'XFL1ABCDEFGH' } });
    expect([one.status, two.status, three.status]).toEqual([201, 201, 201]);
    const [b1, b2, b3] = await Promise.all([one, two, three].map(async (r) => board((await json(r)).board_id)));
    expect(b1.name).toBe('vm-0f1e2d');
    expect(b2.name).toBe('vm-abcdef');
    expect(b3.name).toBe('XFL1ABCDEFGH');
    // Another key, the same machine: a second board, whose name is free.
    const other = await createKey({ name: 'names-2' });
    const dup = await enroll({ key: other.key, machine_id: '0f1e2d3c4b5a69788796a5b4c3d2e1f0', hostname: 'vm' });
    expect(dup.status).toBe(201);
    expect((await board((await json(dup)).board_id)).name).toBe('vm-0f1e2d-2');
    expect((await call(server, 'PATCH', `/api/boards/${b1.id}/`, admin, { name: 'bench-left' })).status).toBe(200);
    expect((await call(server, 'PATCH', `/api/boards/${b2.id}/`, admin, { name: 'bench-left' })).status).toBe(409);
  });

  it('the pending list shows machine id, host name, the address it enrolled from and when', async () => {
    const key = await createKey({ name: 'manual names', approval: 'manual' });
    const before = Date.now();
    const res = await enroll({ key: key.key, machine_id: 'cafe01234567', hostname: 'kv260-x' });
    expect(res.status).toBe(202);
    const id = (await json(res)).board_id as string;
    const list = await json(await call(server, 'GET', '/api/boards/?status=pending', admin));
    const shown = list.boards.find((b: { id: string }) => b.id === id);
    expect(shown).toMatchObject({ name: 'kv260-x-cafe01', status: 'pending', machine_id: 'cafe01234567', hostname: 'kv260-x', enrolled_from: `203.0.113.${address}` });
    expect(Date.parse(shown.enrolled_at)).toBeGreaterThanOrEqual(before - 2000);
  });
});

describe('migration unique_board_names: boards that shared a name', () => {
  it('keeps the name on the oldest and suffixes the others with their id, then enforces unique names', async () => {
    const files = (await fs.readdir(migrationsFolder)).filter((f) => /^\d{4}_.*\.sql$/.test(f)).sort();
    const at = files.findIndex((f) => f.endsWith('_unique_board_names.sql'));
    expect(at).toBeGreaterThan(0);
    const pg = new PGlite();
    const run = async (file: string) => {
      const text = await fs.readFile(path.join(migrationsFolder, file), 'utf8');
      for (const statement of text.split('--> statement-breakpoint')) if (statement.trim()) await pg.exec(statement);
    };
    for (const f of files.slice(0, at)) await run(f);
    const ids = ['1a2b3c4d-0000-4000-8000-000000000001', '2b3c4d5e-0000-4000-8000-000000000002', '3c4d5e6f-0000-4000-8000-000000000003', '4d5e6f70-0000-4000-8000-000000000004'];
    await pg.exec(`insert into boards (id, name, token_hash, created_at) values
      ('${ids[0]}', 'vm', 'h1', '2026-01-01T00:00:02Z'),
      ('${ids[1]}', 'vm', 'h2', '2026-01-01T00:00:01Z'),
      ('${ids[2]}', 'vm', 'h3', '2026-01-01T00:00:03Z'),
      ('${ids[3]}', 'solo', 'h4', '2026-01-01T00:00:04Z')`);
    await run(files[at]!);
    const rows = (await pg.query<{ id: string; name: string }>('select id, name from boards order by id')).rows;
    // The second-made (oldest) keeps "vm"; the others get their id's first 8 characters.
    expect(rows.map((r) => r.name)).toEqual(['vm-1a2b3c4d', 'vm', 'vm-3c4d5e6f', 'solo']);
    await expect(pg.exec(`insert into boards (name, token_hash) values ('solo', 'h5')`)).rejects.toThrow(/boards_name_idx/);
    await pg.close();
  }, 60_000);
});
