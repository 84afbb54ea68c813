import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LinkFeature, TelemetryReading } from '@mm/protocol';
import type { Agent } from '../src/agent.ts';
import { removeTempDirs, startAgent } from './support/agent-fixture.ts';
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
    agents.push((await startAgent(plane.url, { config: { telemetryIntervalMs: 200 } })).agent);
    const link = await plane.link(0);
    const first = await link.waitFor('board.telemetry');
    expect(TelemetryReading.safeParse(first.reading).success).toBe(true);
    expect(first.reading.memory_used_bytes).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 700));
    expect(link.of('board.telemetry').length).toBeGreaterThanOrEqual(3);
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
