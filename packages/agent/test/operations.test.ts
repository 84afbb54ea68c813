import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeDataFrame, type FileRef } from '@mm/protocol';
import type { Agent } from '../src/agent.ts';
import { removeTempDirs, sha256, startAgent, tempDir, waitUntil } from './support/agent-fixture.ts';
import { FakeControlPlane, type FakeAgentLink } from './support/fake-control-plane.ts';
import { isProcessAlive } from './support/processes.ts';

afterAll(removeTempDirs);

let plane: FakeControlPlane;
let dir: string;
const agents: Agent[] = [];

beforeEach(async () => {
  plane = await FakeControlPlane.start('test-token');
  dir = await tempDir('mm-ops-');
});
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
  await plane.close();
});

async function agentFor(opts: Parameters<typeof startAgent>[1] = {}) {
  const started = await startAgent(plane.url, opts);
  agents.push(started.agent);
  return started;
}

/** A file the fake server stores, described as op.start lists it. */
async function serverFile(kind: FileRef['kind'], filename: string, data: Buffer): Promise<FileRef> {
  const file = path.join(dir, `server-${sha256(data)}`);
  await fsp.writeFile(file, data);
  plane.content.set(sha256(data), file);
  return { kind, filename, sha256: sha256(data), size: data.length };
}

async function readyLink(index = 0): Promise<FakeAgentLink> {
  const link = await plane.link(index);
  await link.waitFor('hello');
  return link;
}

const opStart = (opId: number, kind: 'transfer' | 'execute', files: FileRef[], extra: Record<string, unknown> = {}) => ({
  type: 'op.start',
  op_id: opId,
  kind,
  invocation: { id: 21, name: 'inv' },
  files,
  ...extra,
});

describe('transfer', () => {
  it('pulls what the board lacks, verifies it, links it under its name, and sends nothing twice', async () => {
    const { agentDir } = await agentFor();
    const link = await readyLink();
    const files = [
      await serverFile('parameter', 'params.json', Buffer.from('{"duration_s":0}')),
      await serverFile('weights', 'model.xmodel', randomBytes(3 * 1024 * 1024 + 17)),
      await serverFile('bitstream', 'dpu.bit', randomBytes(1000)),
    ];
    link.sendMessage(opStart(1, 'transfer', files));
    const result = await link.waitFor('op.result', (m) => m.outcome.op_id === 1);
    expect(result.outcome).toMatchObject({ status: 'succeeded', error: null, output: null, result: { files_pulled: 3, files_cached: 0 } });
    for (const f of files) {
      const linked = path.join(agentDir, 'invocations', '21', f.filename);
      expect(sha256(await fsp.readFile(linked))).toBe(f.sha256);
    }
    const progress = link.of('op.progress').filter((m) => m.op_id === 1);
    expect(progress[0]!.progress).toMatchObject({ phase: 'transfer', bytes_done: 0 });
    expect(progress.at(-1)!.progress).toMatchObject({ phase: 'transfer', bytes_done: progress.at(-1)!.progress.bytes_total });
    expect(link.logOf(1)).toContain('pulling weights model.xmodel');

    link.sendMessage({ type: 'op.result.ack', op_id: 1 });
    const served = link.bytesServed;
    link.sendMessage(opStart(2, 'transfer', files));
    const again = await link.waitFor('op.result', (m) => m.outcome.op_id === 2);
    expect(again.outcome).toMatchObject({ status: 'succeeded', result: { files_pulled: 0, files_cached: 3, bytes_pulled: 0 } });
    expect(link.bytesServed).toBe(served);
    expect(link.pulls).toHaveLength(3);
    expect(link.invalid).toEqual([]);
  });

  it('resumes a pull cut by a dropped connection from the bytes already on disk', async () => {
    const { agent } = await agentFor();
    const first = await readyLink();
    const data = randomBytes(3 * 1024 * 1024);
    const ref = await serverFile('weights', 'big.bin', data);
    const cutAt = 1024 * 1024;
    // First pull: send 1 MiB, wait until the agent grants credit for it (it is written to
    // disk by then), then drop the connection.
    plane.onContentPull = async (link, pull) => {
      if (link !== first) return false;
      for (let at = 0; at < cutAt; at += 256 * 1024) await link.sendFrame(encodeDataFrame(pull.stream_id, data.subarray(at, at + 256 * 1024)));
      await link.waitFor('stream.credit', (c) => c.stream_id === pull.stream_id);
      link.ws.terminate();
      return true;
    };
    first.sendMessage(opStart(3, 'transfer', [ref]));
    const second = await readyLink(1);
    // The operation is still running on the board: the reconnect hello says so.
    expect(second.of('hello')[0]!.running).toEqual([3]);
    const result = await second.waitFor('op.result', (m) => m.outcome.op_id === 3);
    expect(result.outcome.status).toBe('succeeded');
    const resumed = second.pulls[0]!;
    expect(resumed.offset).toBeGreaterThanOrEqual(cutAt);
    expect(resumed.offset).toBeLessThan(data.length);
    expect(second.bytesServed).toBe(data.length - resumed.offset);
    expect(sha256(await fsp.readFile(agent.cache.pathOf(ref.sha256)))).toBe(ref.sha256);
  });

  it('fails with checksum_mismatch when the bytes do not hash to the sha256, keeping nothing', async () => {
    const { agent } = await agentFor();
    const link = await readyLink();
    const ref = await serverFile('weights', 'w.bin', randomBytes(100_000));
    const wrong = { ...ref, sha256: sha256('other content') };
    plane.content.set(wrong.sha256, plane.content.get(ref.sha256)!);
    link.sendMessage(opStart(4, 'transfer', [wrong]));
    const result = await link.waitFor('op.result', (m) => m.outcome.op_id === 4);
    expect(result.outcome).toMatchObject({ status: 'failed', error: { code: 'checksum_mismatch' } });
    expect(await agent.cache.has(wrong.sha256)).toBe(false);
    expect(await fsp.readdir(agent.cache.partialDir)).toEqual([]);
  });

  it('fails with transfer_failed when the server aborts the stream', async () => {
    await agentFor();
    const link = await readyLink();
    const missing: FileRef = { kind: 'weights', filename: 'gone.bin', sha256: sha256('never stored'), size: 12 };
    link.sendMessage(opStart(5, 'transfer', [missing]));
    const result = await link.waitFor('op.result', (m) => m.outcome.op_id === 5);
    expect(result.outcome).toMatchObject({ status: 'failed', error: { code: 'transfer_failed' } });
    expect(result.outcome.error!.message).toContain('not_found');
  });
});

describe('execute', () => {
  /** A runner that logs, and "processes" the input video into an output video (a copy). */
  const copyRunner = ['/bin/sh', '-c', 'echo "running $MM_INVOCATION_NAME"; echo warming >&2; cp "$MM_INPUT_VIDEO" "$MM_OUTPUT_DIR/out.mp4"; echo done'];

  it('transfers, runs, reports the log live and the output video, which the server then pulls', async () => {
    const { agent } = await agentFor({ config: { runner: copyRunner } });
    const link = await readyLink();
    const video = randomBytes(700_000);
    const files = [await serverFile('input_video', 'in.mp4', video), await serverFile('parameter', 'p.json', Buffer.from('{}'))];
    link.sendMessage(opStart(6, 'execute', files));
    const result = await link.waitFor('op.result', (m) => m.outcome.op_id === 6);
    expect(result.outcome).toMatchObject({
      status: 'succeeded',
      error: null,
      result: { exit_code: 0, output_filename: 'out.mp4' },
      output: { filename: 'out.mp4', sha256: sha256(video), size: video.length, content_type: 'video/mp4' },
    });
    expect(link.of('op.log').filter((m) => m.op_id === 6 && m.stream === 'stdout').map((m) => m.data).join('')).toBe('running inv\ndone\n');
    expect(link.of('op.log').some((m) => m.op_id === 6 && m.stream === 'stderr' && m.data.includes('warming'))).toBe(true);
    expect(link.of('op.progress').some((m) => m.op_id === 6 && m.progress.phase === 'run')).toBe(true);
    // This server's welcome names no features: no early offer.
    expect(link.of('op.output')).toEqual([]);

    const pulled = path.join(dir, 'pulled.mp4');
    const { size } = await link.pullProduced(result.outcome.output!.sha256, pulled);
    expect(size).toBe(video.length);
    expect(sha256(await fsp.readFile(pulled))).toBe(sha256(video));

    // Until acknowledged the outcome is journaled (and repeated to a duplicate op.start).
    expect(agent.journal.outcome(6)).toBeDefined();
    link.sendMessage(opStart(6, 'execute', files));
    await waitUntil(() => link.of('op.result').filter((m) => m.outcome.op_id === 6).length === 2, 'the repeated outcome');
    link.sendMessage({ type: 'op.result.ack', op_id: 6 });
    await waitUntil(() => agent.journal.outcome(6) === undefined, 'the journal entry to go');
    expect(link.invalid).toEqual([]);
  });

  it('offers the output video (op.output) before its outcome to a server that takes it, for one pull', async () => {
    plane.features = ['op.output'];
    await agentFor({ config: { runner: copyRunner } });
    const link = await readyLink();
    const video = randomBytes(3_000_000);
    const files = [await serverFile('input_video', 'in.mp4', video)];
    link.sendMessage(opStart(7, 'execute', files));
    const offer = await link.waitFor('op.output', (m) => m.op_id === 7);
    expect(offer).toEqual({ type: 'op.output', op_id: 7, filename: 'out.mp4', size: video.length, content_type: 'video/mp4' });
    const pulled = path.join(dir, 'early.mp4');
    const { size } = await link.pullOutput(7, pulled);
    expect(size).toBe(video.length);
    expect(sha256(await fsp.readFile(pulled))).toBe(sha256(video));
    const result = await link.waitFor('op.result', (m) => m.outcome.op_id === 7);
    expect(link.messages.indexOf(offer)).toBeLessThan(link.messages.indexOf(result));
    expect(result.outcome.output).toMatchObject({ sha256: sha256(video), size: video.length });
    // One pull per offer; after it the video is pulled by sha256, from the cache.
    await expect(link.pullOutput(7, path.join(dir, 'again.mp4'))).rejects.toMatchObject({ info: { code: 'not_found' } });
    await link.pullProduced(sha256(video), path.join(dir, 'by-sha.mp4'));
    expect(sha256(await fsp.readFile(path.join(dir, 'by-sha.mp4')))).toBe(sha256(video));
    // A run that fails offers nothing.
    link.sendMessage(opStart(8, 'execute', [], { timeout_s: 30 }));
    await link.waitFor('op.result', (m) => m.outcome.op_id === 8);
    expect(link.of('op.output').map((m) => m.op_id)).toEqual([7]);
    expect(link.invalid).toEqual([]);
  });

  it('an unknown produced sha256 is aborted, not a crash', async () => {
    await agentFor();
    const link = await readyLink();
    await expect(link.pullProduced(sha256('nothing'), path.join(dir, 'x'))).rejects.toMatchObject({ info: { code: 'not_found' } });
  });

  it('reports a failing runner with its exit status, and a timeout', async () => {
    const script = 'if [ -n "$MM_PARAMETER" ]; then sleep 30; fi; exit 4';
    await agentFor({ config: { runner: ['/bin/sh', '-c', script] } });
    const link = await readyLink();
    link.sendMessage(opStart(7, 'execute', []));
    const failed = await link.waitFor('op.result', (m) => m.outcome.op_id === 7);
    expect(failed.outcome).toMatchObject({ status: 'failed', error: { code: 'runner_failed' }, result: { exit_code: 4 }, output: null });
    expect(failed.outcome.error!.message).toContain('status 4');
    link.sendMessage(opStart(8, 'execute', [await serverFile('parameter', 'p', Buffer.from('x'))], { timeout_s: 0.5 }));
    const timedOut = await link.waitFor('op.result', (m) => m.outcome.op_id === 8);
    expect(timedOut.outcome).toMatchObject({ status: 'failed', error: { code: 'timeout' } });
  });

  it('op.cancel ends the run and its whole process group; a duplicate op.start is ignored', async () => {
    const pids = path.join(dir, 'pids');
    await agentFor({ config: { runner: ['/bin/sh', '-c', `sleep 300 & echo $! >> "${pids}"; echo $$ >> "${pids}"; wait`] } });
    const link = await readyLink();
    link.sendMessage(opStart(9, 'execute', []));
    const list = await waitUntil(async () => {
      const found = (await fsp.readFile(pids, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean).map(Number);
      return found.length >= 2 && found;
    }, 'the runner to start');
    link.sendMessage(opStart(9, 'execute', []));
    link.sendMessage({ type: 'op.cancel', op_id: 9 });
    const result = await link.waitFor('op.result', (m) => m.outcome.op_id === 9);
    expect(result.outcome.status).toBe('cancelled');
    await waitUntil(() => list.every((p) => !isProcessAlive(p)), 'the runner processes to be gone', 10_000);
    // One runner only: the duplicate start did not start another.
    expect((await fsp.readFile(pids, 'utf8')).trim().split('\n')).toHaveLength(2);
    expect(link.of('op.result').filter((m) => m.outcome.op_id === 9)).toHaveLength(1);
  });

  it('op.cancel of an operation the board does not run reports it cancelled', async () => {
    await agentFor();
    const link = await readyLink();
    link.sendMessage({ type: 'op.cancel', op_id: 77 });
    expect((await link.waitFor('op.result', (m) => m.outcome.op_id === 77)).outcome.status).toBe('cancelled');
  });

  it('a run that ends while the server is unreachable is kept, with its log and video, for the next connection', async () => {
    const marker = path.join(dir, 'go');
    const runner = ['/bin/sh', '-c', `echo before; while [ ! -f "${marker}" ]; do sleep 0.05; done; echo after-the-drop; echo v > "$MM_OUTPUT_DIR/v.avi"`];
    const { agent } = await agentFor({ config: { runner } });
    const first = await readyLink();
    first.sendMessage(opStart(10, 'execute', []));
    await waitUntil(() => first.logOf(10).includes('before'), 'the run to start');
    // The server goes away: the agent reconnects but is not welcomed, so the link is down.
    plane.autoWelcome = false;
    first.ws.terminate();
    const limbo = await readyLink(1);
    await fsp.writeFile(marker, '');
    await waitUntil(() => agent.journal.outcome(10), 'the outcome to be journaled');
    expect(limbo.of('op.result')).toEqual([]);
    // The server is back. The run's log never reached it, so the hello lists the run as running
    // (reported finished, the server would settle it and drop the late log); the log it missed
    // goes first, then the outcome, as they would have gone live.
    plane.autoWelcome = true;
    limbo.ws.terminate();
    const back = await readyLink(2);
    const hello = back.of('hello')[0]!;
    expect(hello.running).toEqual([10]);
    expect(hello.finished.map((o) => o.op_id)).not.toContain(10);
    const { outcome } = await back.waitFor('op.result', (m) => m.outcome.op_id === 10);
    expect(outcome).toMatchObject({ status: 'succeeded', output: { filename: 'v.avi', content_type: 'video/x-msvideo' } });
    expect(back.logOf(10)).toContain('after-the-drop');
    const order = back.messages.map((m) => m.type);
    expect(order.lastIndexOf('op.log')).toBeLessThan(order.indexOf('op.result'));
    const pulled = path.join(dir, 'v.avi');
    await back.pullProduced(outcome.output!.sha256, pulled);
    expect(await fsp.readFile(pulled, 'utf8')).toBe('v\n');
    back.sendMessage({ type: 'op.result.ack', op_id: 10 });
    await waitUntil(() => agent.journal.outcomes().length === 0, 'the journal to empty');
    expect(fs.existsSync(agent.cache.pathOf(outcome.output!.sha256))).toBe(true);
  });
});
