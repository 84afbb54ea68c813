/**
 * Support for the PAC tests: a real control plane (in process) with a board served by a real
 * `mm-agent --simulate` process, and small helpers for the PAC routes.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { listTree } from '../../packages/agent/test/pac-test-support.ts';
import { multipart, type Part } from '../../packages/server/test/invocations-support.ts';
import type { DbKind } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { eventually, freePort, startSimulatedAgent, type SimulatedAgent } from './device-scripts-support.ts';

export { eventually };

/** The sample PAC configuration a fresh simulated board holds (not active). */
export const SAMPLE_PAC = 'zcu104-sim-sample-cfg1';

export interface Board {
  id: string;
  token: string;
  agent: SimulatedAgent;
  /** The simulated board's MM_PAC_DIR. */
  pacDir: string;
}

export async function startPacServer(kind: DbKind, env: Record<string, string> = {}): Promise<TestServer> {
  return startTestServer(kind, env);
}

/** Registers a board and starts its simulated agent (`env`: MM_SIM_REBOOT_* and the like); resolves once it is online. */
export async function startBoard(server: TestServer, name: string, env: Record<string, string> = {}, onlineTimeoutMs = 90_000): Promise<Board> {
  const res = await postJson(server, '/api/boards/', { name });
  expect(res.status).toBe(201);
  const { id, token } = (await json(res)) as { id: string; token: string };
  const agent = await startSimulatedAgent(server.url, token, {
    gpioPort: await freePort(),
    env: { MM_SIM_REBOOT_DELAY_MS: '1500', LOG_LEVEL: process.env.PAC_TEST_AGENT_LOG ?? 'info', ...env },
  });
  await eventually(async () => expect((await getBoard(server, id)).status).toBe('online'), onlineTimeoutMs).catch((err: unknown) => {
    throw new Error(`the simulated agent did not come online: ${String(err)}\n${agent.log.slice(-20).join('\n')}`);
  });
  return { id, token, agent, pacDir: path.join(agent.agentDir, 'simulated-board', 'pacs') };
}

export async function stopBoard(board: Board | undefined): Promise<void> {
  if (!board) return;
  await board.agent.stop();
  await fs.rm(board.agent.agentDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}

export function postJson(server: TestServer, pathname: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return server.api(pathname, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

export async function getBoard(server: TestServer, id: string) {
  const res = await server.api(`/api/boards/${id}/`);
  expect(res.status).toBe(200);
  return (await json(res)) as { id: string; status: string; boot_id: string | null; active_pac: string | null; busy: boolean };
}

export async function getOperation(server: TestServer, id: number) {
  const res = await server.api(`/api/operations/${id}/`);
  expect(res.status).toBe(200);
  return json(res);
}

/** Polls the operation until it has ended. */
export async function operationEnded(server: TestServer, id: number, timeoutMs = 60_000) {
  return eventually(async () => {
    const op = await getOperation(server, id);
    expect(['succeeded', 'failed', 'cancelled']).toContain(op.status);
    return op;
  }, timeoutMs);
}

/** POST /api/pacs/install/ with `file` (and `board_id` first, when given). */
export function installPac(server: TestServer, archive: Uint8Array, opts: { boardId?: string; filename?: string; headers?: Record<string, string> } = {}) {
  const parts: Part[] = [];
  if (opts.boardId !== undefined) parts.push({ name: 'board_id', value: opts.boardId });
  parts.push({ name: 'file', filename: opts.filename ?? 'pac.tar.gz', data: archive, contentType: 'application/gzip' });
  const { body, contentType } = multipart(parts);
  return server.api('/api/pacs/install/', { method: 'POST', headers: { 'content-type': contentType, ...opts.headers }, body });
}

/**
 * What a refused archive must not have changed: every path under the simulated board's
 * folder (MM_PAC_DIR and around it), but its GPIO lines, and the agent folder's top level.
 */
export async function boardFiles(board: Board): Promise<string[]> {
  const simulated = path.join(board.agent.agentDir, 'simulated-board');
  const tree = (await listTree(simulated)).filter((line) => !line.startsWith('gpio/'));
  const top = (await fs.readdir(board.agent.agentDir)).sort().map((name) => `@${name}`);
  return [...top, ...tree];
}

/** Files in the server's content store (uploads are stored there while they are used). */
export async function contentFiles(server: TestServer): Promise<string[]> {
  return (await listTree(path.join(server.dataDir, 'content'))).filter((line) => !line.endsWith('/'));
}
