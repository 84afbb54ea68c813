import { createHash } from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PROTOCOL_VERSION } from '@mm/protocol';
import { Agent } from '../../src/agent.ts';
import type { AgentConfig } from '../../src/config.ts';
import { connectUrlFor } from '../../src/config.ts';
import { createLogger, type Logger } from '../../src/logger.ts';
import { ServerLink, type ServerLinkOptions } from '../../src/link/server-link.ts';

/** Logs of the code under test: silent unless AGENT_TEST_LOG=debug (or another level) is set. */
export function testLogger(): Logger {
  const level = process.env.AGENT_TEST_LOG;
  return level ? createLogger(level as 'debug', { service: 'mm-agent-test' }, (line) => process.stderr.write(line)) : createLogger('silent');
}

const createdDirs: string[] = [];

/** A fresh folder under the system's temporary folder, removed by `removeTempDirs()`. */
export async function tempDir(prefix = 'mm-agent-test-'): Promise<string> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), prefix));
  createdDirs.push(dir);
  return dir;
}

/** Removes every folder `tempDir` made in this test file (call it in afterAll). */
export async function removeTempDirs(): Promise<void> {
  for (const dir of createdDirs.splice(0)) await fsp.rm(dir, { recursive: true, force: true }).catch(() => {});
}

export function sha256(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Polls `check` until it returns something other than undefined/false, or fails after `timeoutMs`. */
export async function waitUntil<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function testConfig(serverUrl: string, agentDir: string, overrides: Partial<AgentConfig> = {}): AgentConfig {
  return {
    serverUrl,
    connectUrl: connectUrlFor(serverUrl),
    boardToken: 'test-token',
    runnerUser: undefined,
    scriptPorts: [8765],
    agentDir,
    scriptsRoot: { root: path.join(agentDir, 'device-scripts'), disk: path.join(agentDir, 'device-scripts') },
    runner: ['/bin/sh', '-c', 'exit 0'],
    runTimeoutMs: 60_000,
    cacheMaxBytes: 1024 ** 3,
    xlnxConfig: 'xlnx-config',
    reboot: 'true',
    pacDir: path.join(agentDir, 'pacs'),
    heartbeatIntervalMs: 15_000,
    heartbeatTimeoutMs: 45_000,
    linkCompression: 'auto',
    telemetryIntervalMs: 30_000,
    reconnectMaxDelayMs: 200,
    bootIdFile: path.join(agentDir, 'boot_id'),
    logLevel: 'silent',
    simulate: false,
    simulatedGpioPort: undefined,
    // No such folder: the facts fall back to what Node says about this machine.
    hostRoot: path.join(agentDir, 'host'),
    simulatedBoardModel: 'zcu104',
    ...overrides,
  };
}

/** An agent in this process, connected to `serverUrl`, with its own MM_AGENT_DIR. */
export async function startAgent(serverUrl: string, opts: { agentDir?: string; config?: Partial<AgentConfig>; cancelGraceMs?: number } = {}) {
  const agentDir = opts.agentDir ?? (await tempDir());
  await fsp.mkdir(agentDir, { recursive: true });
  const config = testConfig(serverUrl, agentDir, opts.config);
  await fsp.writeFile(config.bootIdFile, 'test-boot-id-1\n').catch(() => {});
  const agent = await Agent.create({ config, log: testLogger(), reconnectBaseMs: 50, cancelGraceMs: opts.cancelGraceMs ?? 1000 });
  agent.start();
  return { agent, agentDir, config };
}

/**
 * A bare link (no agent behind it) to `serverUrl`, started: it says hello as an empty board
 * and ignores what it is sent. For tests of the link's own loop (backoff, Retry-After).
 */
export function startBareLink(
  serverUrl: string,
  opts: Pick<ServerLinkOptions, 'reconnectMaxDelayMs'> & Partial<Pick<ServerLinkOptions, 'reconnectBaseMs' | 'clock' | 'random'>>,
): ServerLink {
  const link = new ServerLink({
    url: connectUrlFor(serverUrl),
    token: 'test-token',
    heartbeatIntervalMs: 15_000,
    heartbeatTimeoutMs: 45_000,
    log: testLogger(),
    ...opts,
    handlers: {
      buildHello: async () => ({
        type: 'hello',
        protocol_version: PROTOCOL_VERSION,
        agent_version: 'test',
        hostname: os.hostname(),
        platform: 'linux',
        arch: 'x64',
        boot_id: 'boot',
        active_pac: null,
        cached: [],
        running: [],
        finished: [],
      }),
      onReady: () => {},
      onMessage: () => {},
    },
  });
  link.start();
  return link;
}
