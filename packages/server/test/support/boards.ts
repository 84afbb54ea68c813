import { expect } from 'vitest';
import { json } from '../../../../test/support/http.ts';
import type { TestServer } from '../../../../test/support/test-server.ts';

/** Registers a board through the API (expecting 201) and returns the answer, its one-time token included. */
export async function registerBoard(server: TestServer, name = 'board') {
  const res = await server.api('/api/boards/', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(res.status).toBe(201);
  return (await json(res)) as { id: string; token: string; [k: string]: unknown };
}
