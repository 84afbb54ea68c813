/**
 * Support for the accelerator tests (docs/accelerators.md): a real control plane (in process)
 * with boards served by real `mm-agent --simulate` processes, whose simulated dfx-mgr-client,
 * xmutil and xdputil keep their apps in the board's folder; helpers to add apps to a
 * simulated board (with the behaviour of sim.json) and to call the app routes.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { listTree } from '../../packages/agent/test/pac-test-support.ts';
import { multipart, type Part } from '../../packages/server/test/invocations-support.ts';
import { json } from '../support/http.ts';
import type { TestServer } from '../support/test-server.ts';
import { eventually, getBoard, operationEnded, postJson, startBoard, stopBoard, type Board } from './pacs-support.ts';

export { eventually, getBoard, operationEnded, postJson, startBoard, stopBoard, type Board };

/** The sample apps of a fresh simulated board (sim-dfx-mgrd.mjs); the first is loaded at its "boot". */
export const B4096_APP = 'kv260-benchmark-b4096';
export const B3136_APP = 'kv260-benchmark-b3136';
export const PLAIN_APP = 'kv260-dp';
export const B4096 = '0x101000016010407';
export const B3136 = '0x101000016010406';

/** The simulated board's MM_APPS_DIR. */
export const appsDirOf = (board: Board) => path.join(board.agent.agentDir, 'simulated-board', 'firmware', 'xilinx');
/** The simulated board's /etc/vart.conf. */
export const vartConfOf = (board: Board) => path.join(board.agent.agentDir, 'simulated-board', 'host', 'etc', 'vart.conf');

export interface SimApp {
  name: string;
  shellType?: 'XRT_FLAT' | 'PL_FLAT';
  xclbin?: boolean;
  /** sim.json: the DPU it brings and how its load and unload go. */
  sim?: {
    dpu?: { arch: string; fingerprint: string; frequency_mhz?: number; cores?: number } | null;
    load?: 'ok' | 'fail' | 'hang';
    load_delay_ms?: number;
    unload?: 'ok' | 'fail' | 'hang';
    dpu_answers?: boolean;
  };
}

/** Files of an app folder (relative path → content), as an archive or the board's folder holds them. */
export function appFiles(app: SimApp): Record<string, string> {
  const files: Record<string, string> = {
    'shell.json': `${JSON.stringify({ shell_type: app.shellType ?? 'XRT_FLAT', num_slots: '1' })}\n`,
    [`${app.name}.bit.bin`]: `bitstream of ${app.name}\n`,
    [`${app.name}.dtbo`]: `overlay of ${app.name}\n`,
  };
  if (app.xclbin ?? Boolean(app.sim?.dpu)) files['dpu.xclbin'] = `xclbin of ${app.name}\n`;
  if (app.sim) files['sim.json'] = `${JSON.stringify(app.sim)}\n`;
  return files;
}

/** Puts an app straight into the simulated board's apps folder (as if installed by hand). */
export async function addSimApp(board: Board, app: SimApp): Promise<void> {
  const dir = path.join(appsDirOf(board), app.name);
  await fs.mkdir(dir, { recursive: true });
  for (const [name, content] of Object.entries(appFiles(app))) await fs.writeFile(path.join(dir, name), content);
}

export async function boardApps(server: TestServer, boardId: string, refresh = false) {
  const res = await server.api(`/api/boards/${boardId}/apps/${refresh ? '?refresh=1' : ''}`);
  expect(res.status).toBe(200);
  return json(res);
}

export function loadApp(server: TestServer, boardId: string, app: string, headers: Record<string, string> = {}) {
  return postJson(server, '/api/apps/load/', { board_id: boardId, app }, headers);
}

export function unloadApp(server: TestServer, boardId: string) {
  return postJson(server, '/api/apps/unload/', { board_id: boardId });
}

/** POST /api/apps/install/ with `board_id` and `file`. */
export function installApp(server: TestServer, archive: Uint8Array, opts: { boardId?: string; filename?: string } = {}) {
  const parts: Part[] = [];
  if (opts.boardId !== undefined) parts.push({ name: 'board_id', value: opts.boardId });
  parts.push({ name: 'file', filename: opts.filename ?? 'app.tar.gz', data: archive, contentType: 'application/octet-stream' });
  const { body, contentType } = multipart(parts);
  return server.api('/api/apps/install/', { method: 'POST', headers: { 'content-type': contentType }, body });
}

export async function boardLabels(server: TestServer, boardId: string): Promise<Record<string, string>> {
  const res = await server.api(`/api/boards/${boardId}/`);
  return ((await json(res)) as { labels: Record<string, string> }).labels;
}

export async function operationLog(server: TestServer, id: number): Promise<string> {
  return (await server.api(`/api/operations/${id}/log/`)).text();
}

/** What the board's content cache holds (file names), to prove nothing was sent. */
export async function cacheFiles(board: Board): Promise<string[]> {
  return (await listTree(path.join(board.agent.agentDir, 'cache')).catch(() => [] as string[])).filter((line) => !line.endsWith('/'));
}

/** Creates an invocation; answers its id. */
export async function createInvocation(server: TestServer, name: string): Promise<number> {
  const res = await postJson(server, '/api/invocations/create/', { name, description: '' });
  expect(res.status).toBe(201);
  return ((await json(res)) as { id: number }).id;
}

/** Uploads a file of a kind (multipart, row 4). */
export function uploadFile(server: TestServer, invocationId: number, kind: string, filename: string, data: Uint8Array) {
  const { body, contentType } = multipart([
    { name: 'file_type', value: kind },
    { name: 'file', filename, data, contentType: 'application/octet-stream' },
  ]);
  return server.api(`/api/invocations/${invocationId}/upload/`, { method: 'POST', headers: { 'content-type': contentType }, body });
}

export function patchInvocation(server: TestServer, invocationId: number, body: unknown) {
  return server.api(`/api/invocations/${invocationId}/`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}
