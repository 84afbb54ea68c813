/**
 * Compressed file streams (issue 33, docs/compression.md), end to end: the real server and a
 * real `mm-agent --simulate` as processes, the agent reaching the server through a long,
 * narrow link (bench/wan-proxy.ts: 100 ms round trip, 1.5 MB/s) behind a proxy the test can
 * cut. What crosses the link is read from the operation's result (`files[].wire_bytes`)
 * and from the agent's own log of what it sent.
 *
 * Server and agents run with MM_LINK_COMPRESSION=always: whether a file goes compressed then
 * follows its bytes alone, not how busy this machine is (with `1`, a sender starved of CPU
 * may rightly find raw faster, and a test must not depend on that). The choice by the link's
 * rate is the decider's, held by its unit tests (packages/protocol/test/stream-compression.unit.test.ts)
 * and measured by bench/field-compression.ts.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWanProxy, type WanProxy } from '../../bench/wan-proxy.ts';
import { filesUnder, sha256, sha256File, startCuttableProxy, upload, type CuttableProxy } from '../faults/fault-support.ts';
import { realDatabaseUrl } from '../support/databases.ts';
import { writeBitstreamLike, writeWeightsLike } from '../support/field-data.ts';
import { json, jsonPoster } from '../support/http.ts';
import { eventually, serverCluster, startAgent, type AgentProcess, type ServerCluster } from '../support/processes.ts';
import { asVideo } from '../support/fake-video.ts';

const HEARTBEAT = { MM_HEARTBEAT_INTERVAL_MS: '500', MM_HEARTBEAT_TIMEOUT_MS: '2500' };
const COMPRESS_ALWAYS = { MM_LINK_COMPRESSION: 'always' };
const MiB = 1024 * 1024;
const ICE40_BITSTREAM = path.join(import.meta.dirname, '../fixtures/ice40/counter-hx1k.bin');

interface TransferredFile {
  filename: string;
  size: number;
  cached: boolean;
  bytes_pulled: number;
  wire_bytes: number;
  pushed?: boolean;
}

describe('compressed file streams over a field link', () => {
  let cluster: ServerCluster;
  let wan: WanProxy;
  let cuttable: CuttableProxy;
  let scratch: string;
  let agent: AgentProcess;
  let agentDir: string;
  const extraAgents: AgentProcess[] = [];
  const api = (p: string, init?: RequestInit) => cluster.current().api(p, init);
  const post = jsonPoster(api);
  const url = () => cluster.current().url;
  const boardStatus = async (id: string) => (await json(await api(`/api/boards/${id}/`))).status as string;
  const waitOnline = (id: string) => eventually(async () => expect(await boardStatus(id)).toBe('online'), 60_000, 100);
  const generated = async (name: string, write: (file: string) => Promise<void>) => {
    const file = path.join(scratch, name);
    await write(file);
    return fs.readFile(file);
  };
  /** A new invocation holding `files` (filename → bytes, all of kind `parameter` but the first, `input_video`). */
  const invocationWith = async (name: string, files: Record<string, Buffer>) => {
    const res = await post('/api/invocations/create/', { name, description: 'compression' });
    expect(res.status).toBe(201);
    const inv = (await json(res)).id as number;
    for (const [i, [filename, data]] of Object.entries(files).entries()) {
      expect((await upload(url(), inv, i === 0 ? 'input_video' : 'parameter', filename, i === 0 ? asVideo(data) : data)).status).toBe(201);
    }
    return inv;
  };
  const transfer = async (inv: number, boardId: string) => {
    const res = await post(`/api/invocations/${inv}/transfer/`, { board_id: boardId });
    expect(res.status).toBe(200);
    return json(res);
  };
  const fileOf = (op: { result: { files: TransferredFile[] } }, filename: string) => op.result.files.find((f) => f.filename === filename)!;
  const newBoard = async (name: string) => json(await post('/api/boards/', { name })) as Promise<{ id: string; token: string }>;
  /** A 2 MiB bitstream to a board that pulls it raw (no compression negotiated): whole, and as many bytes on the wire. */
  const expectRawTransfer = async (name: string, boardId: string, dir: string, seed: number) => {
    const bitstream = await generated(`${name}.bit`, (f) => writeBitstreamLike(f, 2 * MiB, seed));
    const inv = await invocationWith(name, { 'design.bit': bitstream });
    const op = await transfer(inv, boardId);
    expect(fileOf(op, 'design.bit')).toMatchObject({ bytes_pulled: bitstream.length, wire_bytes: bitstream.length });
    expect(await sha256File(path.join(dir, 'invocations', String(inv), 'design.bit'))).toBe(sha256(bitstream));
  };
  let board: { id: string; token: string };

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-compress-'));
    agentDir = path.join(scratch, 'agent');
    cluster = await serverCluster(realDatabaseUrl ? 'postgres' : 'embedded', { ...HEARTBEAT, ...COMPRESS_ALWAYS });
    const server = await cluster.start();
    wan = await startWanProxy({ target: { host: '127.0.0.1', port: server.port }, rttMs: 100, rateBytesPerS: 1.5e6 });
    cuttable = await startCuttableProxy({ host: '127.0.0.1', port: wan.port });
    board = await newBoard('field-board');
    // Debug lines name what each stream the agent served put on the wire (the output video).
    agent = await startAgent({ serverUrl: `http://${cuttable.address}`, token: board.token, agentDir, env: { ...HEARTBEAT, ...COMPRESS_ALWAYS, LOG_LEVEL: 'debug' } });
    await waitOnline(board.id);
  }, 240_000);

  afterAll(async () => {
    cuttable?.restore();
    for (const a of [agent, ...extraAgents]) await a?.stop();
    await cuttable?.close();
    await wan?.close();
    await cluster?.cleanup();
    await fs.rm(scratch, { recursive: true, force: true });
  });

  it('both sides name stream.compress: bitstreams cross compressed and arrive whole, verified', async () => {
    const bitstream = await generated('ultrascale-like.bit', (f) => writeBitstreamLike(f, 16 * MiB, 3));
    const ice40 = await fs.readFile(ICE40_BITSTREAM);
    const inv = await invocationWith('bitstreams', { 'design.bit': bitstream, 'counter.bin': ice40 });
    const downBefore = wan.stats().down.bytes;
    const op = await transfer(inv, board.id);
    const crossed = wan.stats().down.bytes - downBefore;
    const big = fileOf(op, 'design.bit');
    expect(big).toMatchObject({ size: bitstream.length, bytes_pulled: bitstream.length, cached: false });
    // Mostly empty configuration frames: far fewer bytes on the wire than in the file.
    expect(big.wire_bytes).toBeGreaterThan(0);
    expect(big.wire_bytes).toBeLessThan(bitstream.length / 10);
    // The real iCE40 bitstream (yosys + nextpnr-ice40 + icepack) is small: one compressed frame.
    expect(fileOf(op, 'counter.bin').wire_bytes).toBeLessThan(ice40.length / 2);
    expect(op.result.wire_bytes).toBe(big.wire_bytes + fileOf(op, 'counter.bin').wire_bytes);
    // What crossed the narrow link toward the board, counted by the link itself rather than by
    // either end, and not timed (a loaded machine stretches any duration): at least the
    // compressed bytes the agent counted, and a fraction of the 16 MiB a raw pull would move.
    expect(crossed).toBeGreaterThanOrEqual(op.result.wire_bytes);
    expect(crossed).toBeLessThan(bitstream.length / 4);
    const dir = path.join(agentDir, 'invocations', String(inv));
    expect(await sha256File(path.join(dir, 'design.bit'))).toBe(sha256(bitstream));
    expect(await sha256File(path.join(dir, 'counter.bin'))).toBe(sha256(ice40));
  }, 120_000);

  it('stream.push: the files a board lacks follow op.start with no pull, one after the other; files it holds are not sent again', async () => {
    const bitstream = await generated('pushed.bit', (f) => writeBitstreamLike(f, 4 * MiB, 13));
    const weights = await generated('pushed-weights.bin', (f) => writeWeightsLike(f, MiB, 17));
    const first = await transfer(await invocationWith('pushed', { 'design.bit': bitstream, 'weights.bin': weights }), board.id);
    expect(fileOf(first, 'design.bit')).toMatchObject({ cached: false, bytes_pulled: bitstream.length, pushed: true });
    expect(fileOf(first, 'weights.bin')).toMatchObject({ cached: false, bytes_pulled: weights.length, pushed: true });
    // In op.start's order (by kind), as the agent takes them.
    const byKind = (first.result.files as TransferredFile[]).map((f) => f.filename);
    expect(first.result.pulls).toEqual(
      byKind.map((name) =>
        name === 'design.bit'
          ? expect.objectContaining({ filename: 'design.bit', sha256: sha256(bitstream), offset: 0, bytes: bitstream.length, complete: true, pushed: true })
          : expect.objectContaining({ filename: 'weights.bin', sha256: sha256(weights), offset: 0, bytes: weights.length, complete: true, pushed: true }),
      ),
    );
    await agent.output.waitFor((l) => l.msg === 'push from the server done' && l.bytes === bitstream.length, 'the agent adopted the push');
    // Another invocation with the same file: the board holds it, and the server knows.
    const again = await transfer(await invocationWith('pushed-again', { 'design.bit': bitstream }), board.id);
    expect(fileOf(again, 'design.bit')).toMatchObject({ cached: true, bytes_pulled: 0, wire_bytes: 0 });
    expect(fileOf(again, 'design.bit').pushed).toBeUndefined();
    expect(again.result.pulls ?? []).toEqual([]);
  }, 120_000);

  it('an incompressible file goes raw: as many bytes on the wire as in the file', async () => {
    const noise = randomBytes(2 * MiB);
    const inv = await invocationWith('noise', { 'noise.mp4': noise });
    const op = await transfer(inv, board.id);
    expect(fileOf(op, 'noise.mp4')).toMatchObject({ size: noise.length, bytes_pulled: noise.length, wire_bytes: noise.length });
    expect(await sha256File(path.join(agentDir, 'invocations', String(inv), 'noise.mp4'))).toBe(sha256(noise));
  }, 120_000);

  it('a link dropped mid-compressed-transfer: the pull resumes at the uncompressed offset and the sha256 matches', async () => {
    // int8 weights: ~1.25×, compressed on a 1.5 MB/s link; 8 MiB take several seconds.
    const weights = await generated('weights.bin', (f) => writeWeightsLike(f, 8 * MiB, 5));
    const inv = await invocationWith('weights', { 'weights.bin': weights });
    const op = await json(await post(`/api/invocations/${inv}/transfer/`, { board_id: board.id }, { prefer: 'respond-async' }));
    await eventually(async () => {
      const partial = (await filesUnder(agentDir)).find((f) => f.includes('partial'));
      expect(partial).toBeDefined();
      expect((await fs.stat(path.join(agentDir, partial!))).size).toBeGreaterThan(MiB);
    }, 60_000, 20);
    cuttable.cut();
    await eventually(async () => expect(await boardStatus(board.id)).toBe('offline'), 10_000, 50);
    cuttable.restore();
    const done = await eventually(async () => {
      const o = await json(await api(`/api/operations/${op.id}/`));
      expect(['succeeded', 'failed']).toContain(o.status);
      return o;
    }, 90_000, 200);
    expect(done.status).toBe('succeeded');
    expect(await (await api(`/api/operations/${op.id}/log/`)).text()).toMatch(/resuming input_video weights\.bin at byte [1-9]/);
    expect(await sha256File(path.join(agentDir, 'invocations', String(inv), 'weights.bin'))).toBe(sha256(weights));
    const file = fileOf(done, 'weights.bin');
    // The first attempt was the push behind op.start; the link cut it, and a pull resumed it.
    const pulls = done.result.pulls as Array<{ offset: number; complete: boolean; pushed?: boolean }>;
    expect(pulls[0]).toMatchObject({ offset: 0, complete: false, pushed: true });
    expect(pulls.at(-1)).toMatchObject({ complete: true });
    expect(pulls.at(-1)!.offset).toBeGreaterThan(0);
    expect(pulls.at(-1)!.pushed).toBeUndefined();
    // Both attempts together still put fewer bytes on the wire than the file holds.
    expect(file.bytes_pulled).toBeGreaterThan(0);
    expect(file.wire_bytes).toBeLessThan(file.bytes_pulled);
  }, 150_000);

  it('the output video comes back unchanged, sent raw (no compressed frame, wire bytes = file bytes)', async () => {
    const inv = await invocationWith('video-back', { 'in.mp4': randomBytes(MiB), 'p.json': Buffer.from('{"duration_s": 1}') });
    const res = await post(`/api/invocations/${inv}/execute/`, { board_id: board.id });
    expect(res.status).toBe(200);
    const op = await json(res);
    const video = Buffer.from(await (await api(`/api/invocations/${inv}/video/`)).arrayBuffer());
    expect(sha256(video)).toBe(op.result.output_video.sha256);
    const sent = await agent.output.waitFor(
      (l) => l.msg === 'stream to the server sent' && (l.source === 'output' || l.source === 'produced') && l.bytes === video.length,
      'the output stream',
    );
    expect(sent.wire_bytes).toBe(video.length);
    expect((sent.compression as { compressed_frames: number }).compressed_frames).toBe(0);
    // The result counts the way back too: file bytes received and bytes on the wire, equal when raw.
    expect(op.result.output_bytes_received).toBeGreaterThanOrEqual(video.length);
    expect(op.result.output_wire_bytes).toBe(op.result.output_bytes_received);
    // And the way out: what the server sent of the inputs, file bytes and wire bytes, per pull.
    expect(op.result.bytes_sent).toBeGreaterThan(0);
    expect(op.result.wire_bytes_sent).toBeGreaterThan(0);
    expect(op.result.wire_bytes_sent).toBeLessThanOrEqual(op.result.bytes_sent);
    for (const pull of op.result.pulls as Array<{ bytes: number; wire_bytes: number }>) expect(pull.wire_bytes).toBeLessThanOrEqual(pull.bytes);
  }, 120_000);

  it('an output that compresses comes back compressed: the execute result reports its wire bytes beside its file bytes', async () => {
    // A runner that leaves a copy of a bitstream-like file as its "video" (bench/output-runner.mjs).
    const source = path.join(scratch, 'compressible-output.bin');
    await writeBitstreamLike(source, 4 * MiB, 21);
    const outBoard = await newBoard('output-board');
    const outDir = path.join(scratch, 'output-agent');
    const runner = `${process.execPath} ${path.join(import.meta.dirname, '../../bench/output-runner.mjs')}`;
    extraAgents.push(
      await startAgent({
        serverUrl: `http://127.0.0.1:${wan.port}`,
        token: outBoard.token,
        agentDir: outDir,
        env: { ...HEARTBEAT, ...COMPRESS_ALWAYS, MM_RUNNER: runner, MM_BENCH_OUTPUT_SOURCE: source },
      }),
    );
    await waitOnline(outBoard.id);
    const inv = await invocationWith('compressible-back', { 'in.mp4': randomBytes(64 * 1024) });
    const res = await post(`/api/invocations/${inv}/execute/`, { board_id: outBoard.id });
    expect(res.status).toBe(200);
    const op = await json(res);
    expect(op.status).toBe('succeeded');
    const size = (await fs.stat(source)).size;
    expect(op.result.output_video.size).toBe(size);
    const back = Buffer.from(await (await api(`/api/invocations/${inv}/video/`)).arrayBuffer());
    expect(sha256(back)).toBe(op.result.output_video.sha256);
    expect(op.result.output_bytes_received).toBeGreaterThanOrEqual(size);
    expect(op.result.output_wire_bytes).toBeGreaterThan(0);
    expect(op.result.output_wire_bytes).toBeLessThan(op.result.output_bytes_received / 10);
    // The input crossed too, raw (random bytes): wire bytes = file bytes on both sides' counts.
    expect(op.result.wire_bytes).toBe(op.result.bytes_pulled);
  }, 150_000);

  it('an agent that does not name the feature (as an older one) gets files raw, and they arrive whole', async () => {
    const old = await newBoard('old-agent-board');
    const oldDir = path.join(scratch, 'old-agent');
    extraAgents.push(await startAgent({ serverUrl: `http://127.0.0.1:${wan.port}`, token: old.token, agentDir: oldDir, env: { ...HEARTBEAT, MM_LINK_COMPRESSION: '0' } }));
    await waitOnline(old.id);
    await expectRawTransfer('old-agent', old.id, oldDir, 7);
  }, 120_000);

  it('a server that does not name the feature (as an older one): the agent pulls raw, and it works', async () => {
    await cluster.current().stop();
    await cluster.start({ MM_LINK_COMPRESSION: '0' });
    await waitOnline(board.id);
    await expectRawTransfer('old-server', board.id, agentDir, 11);
  }, 240_000);
});
