/** Helpers of the rollout tests: create and follow rollouts, read their SSE stream. */
import { expect } from 'vitest';
import { upload } from '../faults/fault-support.ts';
import { json } from '../support/http.ts';
import { takeSseBlocks, type SseBlock } from '../support/sse.ts';
import { eventually } from '../support/eventually.ts';

export interface Api {
  url: string;
  api(pathname: string, init?: RequestInit): Promise<Response>;
}

export interface RolloutBoardView {
  board_id: string;
  board_name: string;
  operation_id: number | null;
  status: string;
  run_ms: number | null;
  metrics: Record<string, number> | null;
}
export interface RolloutView {
  id: number;
  kind: string;
  status: string;
  finished_at: string | null;
  counts: Record<string, number>;
  boards: RolloutBoardView[];
}

export function post(s: Api, pathname: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return s.api(pathname, {
    method: 'POST',
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** An invocation whose simulated run takes `durationS`. */
export async function newInvocation(s: Api, name: string, durationS: number): Promise<number> {
  const res = await post(s, '/api/invocations/create/', { name, description: 'rollouts' });
  expect(res.status).toBe(201);
  const id = (await json(res)).id as number;
  expect((await upload(s.url, id, 'parameter', 'p.json', Buffer.from(JSON.stringify({ duration_s: durationS })))).status).toBe(201);
  return id;
}

export async function createRollout(s: Api, body: Record<string, unknown>): Promise<RolloutView> {
  const res = await post(s, '/api/rollouts/', body);
  const answer = await json(res);
  expect(res.status, JSON.stringify(answer)).toBe(201);
  return answer as RolloutView;
}

export async function getRollout(s: Api, id: number): Promise<RolloutView> {
  const res = await s.api(`/api/rollouts/${id}/`);
  expect(res.status).toBe(200);
  return (await json(res)) as RolloutView;
}

export function waitForRollout(s: Api, id: number, check: (r: RolloutView) => boolean, timeoutMs = 60_000): Promise<RolloutView> {
  return eventually(async () => {
    const r = await getRollout(s, id);
    expect(check(r), JSON.stringify({ status: r.status, boards: r.boards.map((b) => b.status) })).toBe(true);
    return r;
  }, timeoutMs, 200);
}

/** Reads the rollout's SSE stream until `end` (or the stream closes). */
export async function followRollout(s: Api, id: number): Promise<SseBlock[]> {
  const res = await s.api(`/api/rollouts/${id}/events/`, { headers: { accept: 'text/event-stream' } });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const out: SseBlock[] = [];
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return out;
    const { blocks, rest } = takeSseBlocks(buffer + value);
    buffer = rest;
    for (const b of blocks) {
      if (b.data === undefined) continue;
      out.push(b);
      if (b.event === 'end') {
        await reader.cancel();
        return out;
      }
    }
  }
}
