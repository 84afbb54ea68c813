/**
 * Issue 32, item 2: an `mm run` that fails after it created its invocation (here the run is
 * refused: the board went offline) leaves it to the same command's next try, which
 * continues with it instead of making another. A stand-in control plane (a real HTTP server
 * answering as the contract says) refuses the first execute.
 */
import path from 'node:path';
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliHome, type CliHome } from '../../../test/support/cli.ts';
import { standInServer, type StandIn } from '../../../test/support/stand-in-server.ts';

const BOARD = { id: '0b5c3a52-7d7e-4a53-9d0e-0c6f3c7f0001', name: 'lab', status: 'online', busy: false, last_seen_at: null, connected_at: null, agent_version: null, hostname: null, platform: null, boot_id: null, active_pac: null };
const now = new Date().toISOString();

describe('mm run after a failure', () => {
  let cli: CliHome;
  let server: StandIn;
  const calls: string[] = [];
  let executes = 0;

  beforeAll(async () => {
    cli = await cliHome();
    server = await standInServer((req, res) => {
      const key = `${req.method} ${req.url}`;
      calls.push(key);
      const send = (status: number, body: unknown, type = 'application/json') => res.writeHead(status, { 'content-type': type }).end(JSON.stringify(body));
      const invocation = { id: 7, name: 'again', description: '', created_at: now, updated_at: now, files: { parameter: null, bitstream: null, weights: null, input_video: null, output_video: null } };
      req.resume();
      req.on('end', () => {
        if (key.startsWith('GET /api/boards/')) return send(200, { boards: [BOARD], total: 1 });
        if (key === 'POST /api/invocations/create/') return send(201, invocation);
        if (key === 'GET /api/invocations/7/') return send(200, { ...invocation, operations: [] });
        if (key === 'PUT /api/invocations/7/files/parameter/') {
          return send(200, { kind: 'parameter', filename: 'p.json', size: 2, sha256: 'x', content_type: 'application/json', uploaded_at: now, url: '/x' });
        }
        if (key === 'POST /api/invocations/7/execute/') {
          if (++executes === 1) return send(503, { status: 503, code: 'board_offline', title: 'Service Unavailable', detail: 'The board is offline.' }, 'application/problem+json');
          return send(202, { id: 3, kind: 'execute', status: 'queued', board_id: BOARD.id, invocation_id: 7, created_at: now, started_at: null, finished_at: null, progress: { phase: 'queued', bytes_done: 0, bytes_total: 0 }, result: null, error: null, created_by: null });
        }
        send(404, { status: 404, code: 'not_found', title: 'Not Found', detail: key }, 'application/problem+json');
      });
    });
  });
  afterAll(async () => {
    await cli?.cleanup();
    await server?.close();
  });

  it('the same command again continues with the invocation the failed one created', async () => {
    const param = path.join(cli.dir, 'p.json');
    await fs.writeFile(param, '{}');
    const args = ['run', '--name', 'again', '--parameter', param, '--board', 'lab', '--detach', '--json', '--server', server.url];
    const first = await cli.run(args);
    expect(first.code).toBe(3); // board offline
    const second = await cli.run(args);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ invocation_id: 7, operation: { id: 3 } });
    expect(calls.filter((c) => c === 'POST /api/invocations/create/')).toHaveLength(1);
    expect(calls.filter((c) => c === 'POST /api/invocations/7/execute/')).toHaveLength(2);
  }, 120_000);
});
