/**
 * Enrollment's waits run on the injected clock: the Retry-After of a board waiting for
 * approval and the backoff after a server error pass when the clock moves, not before.
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '@mm/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enroll } from '../src/enroll/enroll.ts';
import { createLogger } from '../src/logger.ts';

describe('enrollment on the injected clock', () => {
  const clock = new ManualClock();
  const seen: Array<{ at: number; body: string }> = [];
  let server: http.Server;
  let dir: string;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-enroll-clock-'));
    // Pending (come back in 30 s), then a server error, then the token.
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ at: clock.now(), body });
        if (seen.length === 1) res.writeHead(202, { 'content-type': 'application/json', 'retry-after': '30' }).end(JSON.stringify({ board_id: 'b-1' }));
        else if (seen.length === 2) res.writeHead(503).end();
        else res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ board_id: 'b-1', token: 'the-board-token' }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('asks again after Retry-After and after the backoff, each on the clock', async () => {
    const tokenFile = path.join(dir, 'token');
    const enrolled = enroll({
      serverUrl: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
      enrollment: { key: 'mmk_test', tokenFile, machineIdFiles: [path.join(dir, 'machine-id')] },
      log: createLogger('silent'),
      maxDelayMs: 10_000,
      clock,
    });
    // Answered "pending": it waits 30 s of the clock, however long the test takes.
    await expect.poll(() => seen.length === 1 && clock.pending === 1, { timeout: 15_000 }).toBe(true);
    clock.advance(29_999);
    expect(clock.pending).toBe(1);
    clock.advance(1);
    // The 503: a backoff of at most the first delay (1 s), then the token.
    await expect.poll(() => seen.length === 2 && clock.pending === 1, { timeout: 15_000 }).toBe(true);
    expect(seen[1]!.at - seen[0]!.at).toBe(30_000);
    clock.advance(1000);
    await expect(enrolled).resolves.toBe('the-board-token');
    expect(seen).toHaveLength(3);
    expect(JSON.parse(seen[2]!.body)).toMatchObject({ key: 'mmk_test' });
    expect((await fs.readFile(tokenFile, 'utf8')).trim()).toBe('the-board-token');
  });
});
