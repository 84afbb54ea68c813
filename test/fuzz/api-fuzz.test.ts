/**
 * The API fuzz test (issue 11, "Prove it"): every operation of the server's own OpenAPI
 * document is driven with generated bad input (fast-check, seeded) against a real server
 * process. Every answer must be a documented one: no 5xx but the board answers a route
 * documents (502/503/504), every 4xx is problem+json with a `code`, no request hangs, the
 * server is up at the end and nothing was left on disk.
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../support/databases.ts';
import { serverCluster, type ServerCluster, type ServerProcess } from '../support/processes.ts';
import { fuzzRequest, operationsOf, type FuzzRequest, type KnownIds, type OpenApiOperation } from './fuzz-requests.ts';

/** Fixed, so a failure is reproducible; FUZZ_SEED overrides it to explore. */
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 2500);
/** Longer than any answer the server should take (sync waits are cut to 1 s below). */
const REQUEST_TIMEOUT_MS = 15_000;
/** Answers are read up to this much, then the connection is dropped (downloads, SSE). */
const MAX_BODY_BYTES = 256 * 1024;

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One raw request: the target goes out exactly as generated (no URL normalisation of `..`). */
function send(base: URL, req: FuzzRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      r.destroy();
      reject(new Error(`no complete answer within ${REQUEST_TIMEOUT_MS} ms`));
    }, REQUEST_TIMEOUT_MS);
    const r = http.request(
      {
        host: base.hostname,
        port: base.port,
        method: req.method,
        path: req.path,
        headers: { ...req.headers, ...(req.body ? { 'content-length': String(req.body.length) } : {}) },
        agent,
      },
      (res) => {
        const contentType = String(res.headers['content-type'] ?? '');
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, contentType, body: Buffer.concat(chunks).toString('utf8') });
        };
        // An event stream stays open by design; its headers are the answer.
        if (contentType.startsWith('text/event-stream')) {
          res.destroy();
          done();
          return;
        }
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size <= MAX_BODY_BYTES) chunks.push(c);
          else {
            res.destroy();
            done();
          }
        });
        res.on('end', done);
        res.on('error', (err) => {
          clearTimeout(timer);
          if (size > MAX_BODY_BYTES) return;
          reject(err);
        });
      },
    );
    r.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    r.end(req.body);
  });
}

/** What is wrong with the answer, or undefined when it is a documented one. */
function violation(op: OpenApiOperation, a: Answer): string | undefined {
  if (a.status >= 500) {
    const boardAnswer = [502, 503, 504].includes(a.status) && op.statuses.has(a.status);
    if (!boardAnswer) return `undocumented ${a.status}`;
  }
  if (a.status >= 400) {
    if (a.contentType !== 'application/problem+json') return `${a.status} is ${a.contentType || 'untyped'}, not problem+json`;
    try {
      const problem = JSON.parse(a.body) as { code?: unknown; status?: unknown };
      if (typeof problem.code !== 'string' || problem.code === '') return `${a.status} problem without a code`;
      if (problem.status !== a.status) return `${a.status} problem says status ${String(problem.status)}`;
    } catch {
      return `${a.status} problem+json that is not JSON`;
    }
  }
  return undefined;
}

/** Every file under the data folder but the embedded database's own (content, its temp folder, results, …). */
async function filesOnDisk(dataDir: string): Promise<string[]> {
  const entries = await fs.readdir(dataDir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => !e.isDirectory())
    .map((e) => path.relative(dataDir, path.join(e.parentPath, e.name)))
    .filter((f) => !f.startsWith(`pgdata${path.sep}`) && f !== 'pgdata')
    .sort();
}

interface Finding {
  request: string;
  problem: string;
  body: string;
}

describe.each(dbKinds)('API fuzz (%s database)', (kind) => {
  let cluster: ServerCluster;
  let server: ServerProcess;
  let ops: OpenApiOperation[];
  const known: KnownIds = { kind: ['parameter', 'bitstream', 'weights', 'input_video', 'output_video'] };

  const postJson = async (p: string, body: unknown) => {
    const res = await server.api(p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string | number };
  };

  beforeAll(async () => {
    // Sync POSTs answer 202 after a second instead of waiting ten minutes for an offline board.
    cluster = await serverCluster(kind, { MM_SYNC_WAIT_S: '1', MM_RELAY_TIMEOUT_S: '2' });
    server = await cluster.start();
    ops = operationsOf((await (await server.api('/api/openapi.json')).json()) as Parameters<typeof operationsOf>[0]);
    // Fixtures, so generated ids sometimes name real things: an invocation with a file, a board (offline), a device script.
    const inv = await postJson('/api/invocations/create/', { name: 'fuzz', description: '' });
    const form = new FormData();
    form.set('file_type', 'parameter');
    form.set('file', new Blob(['{"duration_s": 0}']), 'p.json');
    expect((await server.api(`/api/invocations/${inv.id}/upload/`, { method: 'POST', body: form })).status).toBe(201);
    const board = await postJson('/api/boards/', { name: 'fuzz-board' });
    const scripts = (await (await server.api('/api/device-scripts/')).json()) as { scripts: Array<{ id: string }> };
    known.id = [String(inv.id), String(board.id), ...scripts.scripts.map((s) => s.id)];
  });

  afterAll(async () => {
    await cluster?.cleanup();
  });

  it(`answers ${RUNS} generated bad requests only as documented, and leaves nothing behind`, { timeout: 300_000 }, async () => {
    const base = new URL(server.url);
    const before = await filesOnDisk(cluster.dataDir);
    const findings = new Map<string, Finding>();
    const statuses = new Map<number, number>();
    const started = Date.now();

    await fc.assert(
      fc.asyncProperty(fuzzRequest(ops, known), async (req) => {
        const label = `${req.method} ${req.op.template}`;
        let answer: Answer;
        try {
          answer = await send(base, req);
        } catch (err) {
          findings.set(`${label} ${String(err)}`, { request: `${req.method} ${req.path}`, problem: String(err), body: '' });
          return;
        }
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const wrong = violation(req.op, answer);
        if (!wrong) return;
        const finding = { request: `${req.method} ${req.path} ${JSON.stringify(req.headers)} ${req.body?.toString('utf8').slice(0, 300) ?? ''}`, problem: wrong, body: answer.body.slice(0, 300) };
        findings.set(`${label} ${wrong}`, finding);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );

    const seconds = (Date.now() - started) / 1000;
    console.log(
      `fuzz (${kind}): ${RUNS} requests in ${seconds.toFixed(1)} s, seed ${SEED}; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`,
    );
    expect([...findings.entries()].map(([k, f]) => `${k}\n    ${f.request}\n    -> ${f.body}`)).toEqual([]);

    // Still up and well.
    const health = await server.api('/api/health/');
    expect(health.status).toBe(200);
    expect(server.output.text.filter((l) => /unhandledRejection|uncaughtException/.test(l))).toEqual([]);
    // Nothing left behind: no file in the content store, its temp folder or anywhere else that
    // was not there before (the fuzz may rightly delete the fixture's file, never add one).
    await expect.poll(async () => (await filesOnDisk(cluster.dataDir)).filter((f) => !before.includes(f)), { timeout: 10_000 }).toEqual([]);
  });
});
