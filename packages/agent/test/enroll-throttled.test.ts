/**
 * Enrolling under the control plane's per-address limit (issue 46, hole 3): a 429 with
 * Retry-After is a wait, not a refused key; the agent asks again after it instead of
 * stopping (exit code 2) as it does for a 401. A real HTTP server on loopback answers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { enroll, EnrollmentRefusedError } from '../src/enroll/enroll.ts';
import { testLogger } from './support/agent-fixture.ts';

describe('enrolling while the address is throttled', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  async function serverAnswering(answers: Array<{ status: number; headers?: Record<string, string>; body: unknown }>) {
    const seen: number[] = [];
    const server = http.createServer((req, res) => {
      req.resume();
      const a = answers[Math.min(seen.length, answers.length - 1)]!;
      seen.push(a.status);
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end(JSON.stringify(a.body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-enroll-429-'));
    cleanups.push(() => fsp.rm(dir, { recursive: true, force: true }));
    const opts = {
      serverUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      enrollment: { key: 'mmk_x', tokenFile: path.join(dir, 'token'), machineIdFiles: [path.join(dir, 'machine-id')] },
      log: testLogger(),
      maxDelayMs: 1000,
    };
    return { seen, opts, dir };
  }

  it('waits for Retry-After on a 429 and asks again', async () => {
    const { seen, opts } = await serverAnswering([
      { status: 429, headers: { 'retry-after': '1' }, body: { code: 'too_many_attempts' } },
      { status: 201, body: { board_id: '00000000-0000-4000-8000-000000000000', token: 't'.repeat(43) } },
    ]);
    expect(await enroll(opts)).toBe('t'.repeat(43));
    expect(seen).toEqual([429, 201]);
    expect((await fsp.readFile(opts.enrollment.tokenFile, 'utf8')).trim()).toBe('t'.repeat(43));
  });

  it('still stops on a refused key (401)', async () => {
    const { opts } = await serverAnswering([{ status: 401, body: { code: 'unauthorized' } }]);
    await expect(enroll(opts)).rejects.toBeInstanceOf(EnrollmentRefusedError);
  });
});
