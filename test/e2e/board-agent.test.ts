/**
 * End to end: the real control plane and a real `mm-agent --simulate`, as processes,
 * talking over the real link (issue 3's acceptance list).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { eventually, isLiveProcess, pidsWithMarker, serverCluster, startAgent, type AgentProcess, type ServerCluster } from '../support/processes.ts';
import { FakeAgent, tryConnect } from '../../packages/server/test/support/fake-agent.ts';
import { asVideo } from '../support/fake-video.ts';

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Streams a file into row 4's multipart upload (no 300 MB buffers in the test). */
function uploadPath(baseUrl: string, invocationId: number, kind: string, filePath: string, filename = path.basename(filePath)): Promise<{ status: number; body: string }> {
  const boundary = `----mm-e2e-${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file_type"\r\n\r\n${kind}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    void fs.stat(filePath).then((st) => {
      const req = http.request(new URL(`/api/invocations/${invocationId}/upload/`, baseUrl), {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + st.size + tail.length },
      });
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write(head);
      const file = createReadStream(filePath, { highWaterMark: 1024 * 1024 });
      file.on('end', () => req.end(tail));
      file.pipe(req, { end: false });
    }, reject);
  });
}

async function uploadBytes(baseUrl: string, invocationId: number, kind: string, filename: string, data: Buffer, dir: string) {
  const file = path.join(dir, `${invocationId}-${kind}-${filename}`);
  await fs.writeFile(file, data);
  const r = await uploadPath(baseUrl, invocationId, kind, file, filename);
  expect(r.status).toBe(201);
  return JSON.parse(r.body) as { sha256: string; size: number };
}

/** Writes `size` bytes that do not repeat (so no layer could shortcut them). */
async function writeBigFile(file: string, size: number): Promise<void> {
  const handle = await fs.open(file, 'w');
  try {
    const block = randomBytes(1024 * 1024);
    for (let at = 0, i = 0; at < size; at += block.length, i++) {
      block.writeUInt32BE(i, 0);
      // It goes up as an input video: it starts like one (invalid_video otherwise).
      await handle.write(i === 0 ? asVideo(Buffer.from(block)) : block, 0, Math.min(block.length, size - at));
    }
  } finally {
    await handle.close();
  }
}

function isMp4(video: Buffer): boolean {
  return video.subarray(4, 8).toString('latin1') === 'ftyp' && video.includes(Buffer.from('moov'));
}

// One database (the real one where configured): what is end to end here does not depend on
// which PostgreSQL holds the rows; the integration files cover both (docs/testing.md).
describe.each(dbKinds.slice(-1))('board and agent, end to end (%s database)', (kind) => {
  let cluster: ServerCluster;
  let url: string;
  let board: { id: string; token: string };
  let agent: AgentProcess;
  let agentDir: string;
  let scratch: string;
  const api = (p: string, init?: RequestInit) => cluster.current().api(p, init);
  const post = (p: string, body?: unknown, headers: Record<string, string> = {}) =>
    api(p, {
      method: 'POST',
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const boardStatus = async () => (await json(await api(`/api/boards/${board.id}/`))).status as string;
  const createInvocation = async (name: string) => {
    const res = await post('/api/invocations/create/', { name, description: 'e2e' });
    expect(res.status).toBe(201);
    return (await json(res)).id as number;
  };
  const waitOnline = () => eventually(async () => expect(await boardStatus()).toBe('online'), 60_000);
  const restartAgent = async () => {
    agent = await startAgent({ serverUrl: url, token: board.token, agentDir });
    await waitOnline();
  };

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-e2e-'));
    agentDir = path.join(scratch, 'agent');
    cluster = await serverCluster(kind);
    url = (await cluster.start()).url;
    const res = await post('/api/boards/', { name: 'e2e-board' });
    expect(res.status).toBe(201);
    board = await json(res);
    await restartAgent();
  });

  afterAll(async () => {
    await agent?.stop();
    await cluster?.cleanup();
    await fs.rm(scratch, { recursive: true, force: true });
  });

  it('executes an invocation with four files and brings a playable MP4 back; again, without sending a byte', async () => {
    const inv = await createInvocation('four-files');
    await uploadBytes(url, inv, 'parameter', 'params.json', Buffer.from('{"duration_s": 1}'), scratch);
    await uploadBytes(url, inv, 'bitstream', 'design.bit', randomBytes(200_000), scratch);
    await uploadBytes(url, inv, 'weights', 'model.bin', randomBytes(3_000_000), scratch);
    const input = await uploadBytes(url, inv, 'input_video', 'input.mp4', asVideo(randomBytes(1_500_000)), scratch);

    const res = await post(`/api/invocations/${inv}/execute/`);
    expect(res.status).toBe(200);
    const op = await json(res);
    expect(op).toMatchObject({ kind: 'execute', status: 'succeeded', board_id: board.id, invocation_id: inv, error: null });
    expect(op.result.exit_code).toBe(0);
    expect(op.result.bytes_sent).toBe(200_000 + 3_000_000 + 1_500_000 + '{"duration_s": 1}'.length);
    expect(op.result.output_video).toMatchObject({ kind: 'output_video', content_type: 'video/mp4' });

    const video = Buffer.from(await (await api(`/api/invocations/${inv}/video/`)).arrayBuffer());
    expect(isMp4(video)).toBe(true);
    expect(sha256(video)).toBe(op.result.output_video.sha256);
    const onBoard = path.join(agentDir, 'invocations', String(inv), 'input.mp4');
    expect(await sha256File(onBoard)).toBe(input.sha256);
    const log = await (await api(`/api/operations/${op.id}/log/`)).text();
    expect(log).toMatch(/progress|render/i);

    const again = await json(await post(`/api/invocations/${inv}/execute/`));
    expect(again.status).toBe('succeeded');
    expect(again.result.bytes_sent ?? 0).toBe(0);
    expect(again.result.files_pulled).toBe(0);
    expect(again.result.pulls ?? []).toEqual([]);
  });

  it('runs two executes at once one after the other', async () => {
    const inv = await createInvocation('pair');
    await uploadBytes(url, inv, 'parameter', 'p.json', Buffer.from('{"duration_s": 1}'), scratch);
    const [a, b] = await Promise.all([post(`/api/invocations/${inv}/execute/`), post(`/api/invocations/${inv}/execute/`)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const [first, second] = [await json(a), await json(b)].sort((x, y) => x.id - y.id);
    expect(Date.parse(second.started_at)).toBeGreaterThanOrEqual(Date.parse(first.finished_at));
  });

  it('cancels a long run and its processes are gone', async () => {
    const inv = await createInvocation('long');
    await uploadBytes(url, inv, 'parameter', 'p.json', Buffer.from('{"duration_s": 60}'), scratch);
    const op = await json(await post(`/api/invocations/${inv}/execute/`, undefined, { prefer: 'respond-async' }));
    const runners = await eventually(async () => {
      const pids = await pidsWithMarker(agent.marker, [agent.pid]);
      expect(pids.length).toBeGreaterThan(0);
      return pids;
    }, 60_000);
    expect((await json(await api(`/api/operations/${op.id}/`))).status).toBe('running');
    const c = await post(`/api/operations/${op.id}/cancel/`);
    expect(c.status).toBe(202);
    const ended = await eventually(async () => {
      const o = await json(await api(`/api/operations/${op.id}/`));
      expect(o.status).toBe('cancelled');
      return o;
    }, 30_000);
    expect(ended.error.code).toBe('cancelled');
    await eventually(async () => expect(await pidsWithMarker(agent.marker, [agent.pid])).toEqual([]), 20_000);
    for (const pid of runners) expect(await isLiveProcess(pid)).toBe(false);
  });

  it('keeps the board online through a fast reconnect of its link', async () => {
    const samples: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        samples.push(await boardStatus());
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    // A second link of the board says hello while the agent's link is still open:
    // the agent's link is replaced (4002), then the agent reconnects and replaces this one.
    const intruder = await FakeAgent.online(url, board.token, { boot_id: 'intruder' });
    await eventually(() => expect(agent.output.lines.some((l) => l.code === 4002)).toBe(true), 20_000);
    expect(await intruder.closed).toBe(4002);
    await waitOnline();
    sampling = false;
    await sampler;
    expect(samples.length).toBeGreaterThan(5);
    expect(new Set(samples)).toEqual(new Set(['online']));
  });

  it('refuses a wrong or revoked board token with 401', async () => {
    const wrong = await tryConnect(url, 'not-a-board-token');
    expect('refused' in wrong && wrong.refused.status).toBe(401);
    const res = await post('/api/boards/', { name: 'short-lived' });
    const doomed = await json(res);
    const other = await startAgent({ serverUrl: url, token: doomed.token, agentDir: path.join(scratch, 'doomed-agent') });
    try {
      await eventually(async () => expect((await json(await api(`/api/boards/${doomed.id}/`))).status).toBe('online'), 60_000);
      expect((await api(`/api/boards/${doomed.id}/`, { method: 'DELETE' })).status).toBe(204);
      await other.output.waitFor((l) => l.code === 4003, 'close 4003', 20_000);
      const revoked = await tryConnect(url, doomed.token);
      expect('refused' in revoked && revoked.refused.status).toBe(401);
      if ('refused' in revoked) expect(JSON.parse(revoked.refused.body).code).toBe('unauthorized');
    } finally {
      await other.stop();
    }
  });

  it('resumes a transfer after the agent is killed mid-way, and the file on the board is right', async () => {
    const inv = await createInvocation('big');
    const big = path.join(scratch, 'big-input.mp4');
    await writeBigFile(big, 300 * 1024 * 1024);
    const bigSha = await sha256File(big);
    const up = await uploadPath(url, inv, 'input_video', big);
    expect(up.status).toBe(201);
    await fs.rm(big);

    const op = await json(await post(`/api/invocations/${inv}/transfer/`, undefined, { prefer: 'respond-async' }));
    // Kill -9 as soon as bytes of the file are on the board's disk.
    const partial = await eventually(async () => {
      const found = (await fs.readdir(agentDir, { recursive: true })).find((f) => f.endsWith(path.join('partial', bigSha)));
      expect(found).toBeDefined();
      const file = path.join(agentDir, found!);
      expect((await fs.stat(file)).size).toBeGreaterThan(0);
      return file;
    }, 60_000, 2);
    await agent.kill9();
    const keptBytes = (await fs.stat(partial)).size;
    expect(keptBytes).toBeGreaterThan(0);
    expect(keptBytes).toBeLessThan(300 * 1024 * 1024);
    expect((await json(await api(`/api/operations/${op.id}/`))).status).toBe('running');

    await restartAgent();
    const done = await eventually(async () => {
      const o = await json(await api(`/api/operations/${op.id}/`));
      expect(o.status).toBe('succeeded');
      return o;
    }, 120_000);
    const resumed = (done.result.pulls as Array<{ offset: number; complete: boolean }>).filter((p) => p.offset > 0 && p.complete);
    expect(resumed.length).toBe(1);
    expect(resumed[0]!.offset).toBeGreaterThan(0);
    expect(await (await api(`/api/operations/${op.id}/log/`)).text()).toMatch(/resuming at byte [1-9]/);
    expect(await sha256File(path.join(agentDir, 'invocations', String(inv), 'big-input.mp4'))).toBe(bigSha);
  });

  it('delivers the result and the video of a run that ends while the server is down', async () => {
    const inv = await createInvocation('server-restart');
    await uploadBytes(url, inv, 'parameter', 'p.json', Buffer.from('{"duration_s": 4}'), scratch);
    const op = await json(await post(`/api/invocations/${inv}/execute/`, undefined, { prefer: 'respond-async' }));
    await eventually(async () => expect((await pidsWithMarker(agent.marker, [agent.pid])).length).toBeGreaterThan(0), 60_000);
    const stopped = await cluster.current().stop();
    expect(stopped.code).toBe(0);
    // The run ends while the server is away; the agent journals its outcome.
    await agent.output.waitFor((l) => l.msg === 'operation ended' && l.op_id === op.id, 'operation ended', 60_000);
    await cluster.start();
    const done = await eventually(async () => {
      const o = await json(await api(`/api/operations/${op.id}/`));
      expect(o.status).toBe('succeeded');
      return o;
    }, 90_000);
    const video = Buffer.from(await (await api(`/api/invocations/${inv}/video/`)).arrayBuffer());
    expect(isMp4(video)).toBe(true);
    expect(sha256(video)).toBe(done.result.output_video.sha256);
    await waitOnline();
  });
});
