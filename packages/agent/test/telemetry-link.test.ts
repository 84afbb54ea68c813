import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LinkFeature, TelemetryReading } from '@mm/protocol';
import type { Agent } from '../src/agent.ts';
import { removeTempDirs, startAgent, tempDir } from './support/agent-fixture.ts';
import { FakeControlPlane } from './support/fake-control-plane.ts';

afterAll(removeTempDirs);

let plane: FakeControlPlane;
const agents: Agent[] = [];
beforeEach(async () => {
  plane = await FakeControlPlane.start('test-token');
});
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
  await plane.close();
});

describe('telemetry on the link', () => {
  it('sends board.telemetry at once and every interval to a server that names the feature', async () => {
    plane.features = [LinkFeature.earlyOutput, LinkFeature.boardTelemetry];
    // The board's own /proc, under its host root (MM_HOST_ROOT): 4 GiB with 3 GiB available, load 0.42.
    const hostRoot = await tempDir();
    await fsp.mkdir(path.join(hostRoot, 'proc'), { recursive: true });
    await fsp.writeFile(path.join(hostRoot, 'proc/meminfo'), 'MemTotal:        4194304 kB\nMemFree:          100000 kB\nMemAvailable:    3145728 kB\n');
    await fsp.writeFile(path.join(hostRoot, 'proc/loadavg'), '0.42 0.30 0.20 1/123 4567\n');
    agents.push((await startAgent(plane.url, { config: { telemetryIntervalMs: 200, hostRoot } })).agent);
    const link = await plane.link(0);
    const first = await link.waitFor('board.telemetry');
    expect(TelemetryReading.safeParse(first.reading).success).toBe(true);
    expect(first.reading.memory_used_bytes).toBe(1024 ** 3);
    expect(first.reading.load_1m).toBe(0.42);
    // Then one every interval (waited for, not timed: the machine may be loaded).
    await expect.poll(() => link.of('board.telemetry').length, { timeout: 15_000 }).toBeGreaterThanOrEqual(3);
  });

  it('sends none to a server that does not name it (an older server)', async () => {
    plane.features = [LinkFeature.earlyOutput];
    agents.push((await startAgent(plane.url, { config: { telemetryIntervalMs: 100 } })).agent);
    const link = await plane.link(0);
    await link.waitFor('hello');
    await new Promise((r) => setTimeout(r, 600));
    expect(link.of('board.telemetry')).toEqual([]);
  });
});
