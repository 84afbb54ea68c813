import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FileRef } from '@mm/protocol';
import { removeTempDirs, sha256, tempDir, waitUntil } from './support/agent-fixture.ts';
import { FakeControlPlane } from './support/fake-control-plane.ts';
import { findBox, parseBoxes } from './support/mp4-boxes.ts';
import { isProcessAlive } from './support/processes.ts';

afterAll(removeTempDirs);

const BIN = fileURLToPath(new URL('../bin/mm-agent.mjs', import.meta.url));

let plane: FakeControlPlane;
let dir: string;
const processes: ChildProcess[] = [];
const strayPids: number[] = [];

beforeEach(async () => {
  plane = await FakeControlPlane.start('process-token');
  dir = await tempDir('mm-agent-process-');
});
afterEach(async () => {
  for (const p of processes.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  for (const pid of strayPids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await plane.close();
});

/** `mm-agent --simulate` as a real process; its stdout (JSON log lines) is collected. */
function startAgentProcess(agentDir: string) {
  const lines: string[] = [];
  const child = spawn(process.execPath, [BIN, '--simulate'], {
    env: {
      PATH: process.env.PATH,
      MM_SERVER_URL: plane.url,
      MM_BOARD_TOKEN: 'process-token',
      MM_AGENT_DIR: agentDir,
      MM_SIM_GPIO_PORT: '0',
      MM_RECONNECT_MAX_DELAY_MS: '500',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString('utf8');
    const parts = text.split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  processes.push(child);
  return { child, lines, exited };
}

async function serverFile(kind: FileRef['kind'], filename: string, data: Buffer): Promise<FileRef> {
  const file = path.join(dir, `content-${sha256(data)}`);
  await fsp.writeFile(file, data);
  plane.content.set(sha256(data), file);
  return { kind, filename, sha256: sha256(data), size: data.length };
}

describe('mm-agent --simulate as a process', () => {
  it('connects, runs an invocation into a real MP4, serves its GPIO script, and stops cleanly on SIGTERM', async () => {
    const agentDir = path.join(dir, 'agent');
    const agent = startAgentProcess(agentDir);
    const link = await plane.link(0, 60_000);
    const hello = await link.waitFor('hello', undefined, 60_000);
    expect(hello.platform).toContain('simulated');
    expect(hello.boot_id).toBe((await fsp.readFile(path.join(agentDir, 'simulated-board', 'boot_id'), 'utf8')).trim());

    // The GPIO motor script runs on the simulated board.
    const motorLine = await waitUntil(() => agent.lines.find((l) => l.includes('simulated GPIO motor script running')), 'the GPIO script');
    const motorUrl = (JSON.parse(motorLine) as { url: string }).url;
    expect((await fetch(`${motorUrl}/state`)).status).toBe(200);

    const files = [
      await serverFile('input_video', 'in.avi', randomBytes(400_000)),
      await serverFile('parameter', 'params.json', Buffer.from(JSON.stringify({ duration_s: 0.3 }))),
    ];
    link.sendMessage({ type: 'op.start', op_id: 1, kind: 'execute', invocation: { id: 5, name: 'process test' }, files });
    const result = await link.waitFor('op.result', (m) => m.outcome.op_id === 1, 60_000);
    expect(result.outcome).toMatchObject({ status: 'succeeded', output: { filename: 'output.mp4', content_type: 'video/mp4' } });
    expect(link.logOf(1)).toContain('wrote output.mp4');
    const pulled = path.join(dir, 'output.mp4');
    await link.pullProduced(result.outcome.output!.sha256, pulled);
    const mp4 = await fsp.readFile(pulled);
    expect(sha256(mp4)).toBe(result.outcome.output!.sha256);
    const boxes = parseBoxes(mp4);
    expect(boxes.map((b) => b.type)).toEqual(expect.arrayContaining(['ftyp', 'moov', 'mdat']));
    expect(findBox(boxes, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsd'])!.children.map((c) => c.type)).toContain('avc1');

    agent.child.kill('SIGTERM');
    expect(await agent.exited).toBe(0);
    expect(link.invalid).toEqual([]);
  });

  it('killed during a run, it reports the run failed (agent_restarted) when started again, and the run is gone', async () => {
    const agentDir = path.join(dir, 'agent');
    const first = startAgentProcess(agentDir);
    const link = await plane.link(0, 60_000);
    await link.waitFor('hello', undefined, 60_000);
    const params = await serverFile('parameter', 'long.json', Buffer.from(JSON.stringify({ duration_s: 120, spawn_children: 1 })));
    link.sendMessage({ type: 'op.start', op_id: 2, kind: 'execute', invocation: { id: 6, name: 'long' }, files: [params] });
    const log = () => link.logOf(2);
    await waitUntil(() => /helper process pid \d+/.test(log()), 'the runner and its helper to start', 60_000);
    const pids = [Number(/, pid (\d+)/.exec(log())![1]), Number(/helper process pid (\d+)/.exec(log())![1])];
    strayPids.push(...pids);
    expect(pids.every(isProcessAlive)).toBe(true);

    first.child.kill('SIGKILL');
    await first.exited;
    // The runner survives its agent (its own process group) until the next agent ends it.
    expect(pids.some(isProcessAlive)).toBe(true);

    startAgentProcess(agentDir);
    const again = await plane.link(1, 60_000);
    const hello = await again.waitFor('hello', undefined, 60_000);
    expect(hello.running).toEqual([]);
    expect(hello.finished).toEqual([expect.objectContaining({ op_id: 2, status: 'failed', error: expect.objectContaining({ code: 'agent_restarted' }) })]);
    await waitUntil(() => pids.every((p) => !isProcessAlive(p)), 'the old run to be ended', 20_000);
  });
});
