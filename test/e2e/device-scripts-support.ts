/**
 * Support for the device-script relay's end-to-end tests and benchmark: a real
 * `mm-agent --simulate` process, a raw SSE reader, and small HTTP helpers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SseBlock, takeSseBlocks } from '../support/sse.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const AGENT_BIN = path.join(repoRoot, 'packages/agent/bin/mm-agent.mjs');

export { eventually } from '../support/eventually.ts';

/** A port nothing listens on right now (bound and released: another process could take it, rarely). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface SimulatedAgent {
  proc: ChildProcess;
  agentDir: string;
  /** The simulated board's sysfs stand-in (gpioN/value files). */
  gpioRoot: string;
  /** Output lines so far (JSON log lines), for failure messages. */
  log: string[];
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL if it lingers; resolves once it is gone. */
  stop(): Promise<void>;
}

export interface AgentStartOptions {
  agentDir?: string;
  /** MM_SIM_GPIO_PORT: where the simulated motor script listens. */
  gpioPort: number;
  env?: Record<string, string>;
}

/** Starts `node packages/agent/bin/mm-agent.mjs --simulate` against `serverUrl` with the board's token. */
export async function startSimulatedAgent(serverUrl: string, token: string, opts: AgentStartOptions): Promise<SimulatedAgent> {
  const agentDir = opts.agentDir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'mm-relay-agent-')));
  const proc = spawn(process.execPath, [AGENT_BIN, '--simulate'], {
    cwd: repoRoot,
    env: {
      ...process.env,
      MM_SERVER_URL: serverUrl,
      MM_BOARD_TOKEN: token,
      MM_AGENT_DIR: agentDir,
      MM_SIM_GPIO_PORT: String(opts.gpioPort),
      MM_RECONNECT_MAX_DELAY_MS: '200',
      LOG_LEVEL: process.env.RELAY_TEST_AGENT_LOG ?? 'info',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line) log.push(line);
    if (log.length > 2000) log.splice(0, log.length - 2000);
    if (process.env.RELAY_TEST_AGENT_LOG) process.stderr.write(chunk);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return {
    proc,
    agentDir,
    gpioRoot: path.join(agentDir, 'simulated-board', 'gpio'),
    log,
    exited,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGCONT'); // a paused agent could not act on SIGTERM
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    },
  };
}

export type { SseBlock } from '../support/sse.ts';

export interface SseReader {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Every block received so far, in order. */
  blocks: SseBlock[];
  /** Resolves with the first block (from `from` on) that matches; rejects if the stream ends first or after `timeoutMs`. */
  waitFor(match: (b: SseBlock) => boolean, opts?: { from?: number; timeoutMs?: number }): Promise<SseBlock>;
  /** Called for each block as it arrives (benchmarks time receipt here). */
  onBlock: ((b: SseBlock) => void) | undefined;
  ended: Promise<void>;
  close(): void;
}

/**
 * Opens an event stream with node:http (cheap enough for a thousand of them) and parses
 * it block by block, keeping ids, event names, comments and retry exactly as sent.
 */
export function openSse(url: string, headers: Record<string, string> = {}, agent?: http.Agent): Promise<SseReader> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers }, ...(agent ? { agent } : {}) }, (res) => {
      const blocks: SseBlock[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      let done = false;
      res.setEncoding('utf8');
      const ended = new Promise<void>((resolveEnd) => {
        const finish = () => {
          done = true;
          for (const w of [...waiters]) w();
          resolveEnd();
        };
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
      });
      const reader: SseReader = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        blocks,
        onBlock: undefined,
        ended,
        close: () => req.destroy(),
        waitFor(match, opts = {}) {
          const timeoutMs = opts.timeoutMs ?? 20_000;
          return new Promise<SseBlock>((resolveBlock, rejectBlock) => {
            let at = opts.from ?? 0;
            const check = () => {
              for (; at < blocks.length; at++) {
                if (match(blocks[at]!)) {
                  cleanup();
                  resolveBlock(blocks[at]!);
                  return;
                }
              }
              if (done) {
                cleanup();
                rejectBlock(new Error(`event stream ended; got ${JSON.stringify(blocks.slice(-5))}`));
              }
            };
            const timer = setTimeout(() => {
              cleanup();
              rejectBlock(new Error(`no matching event within ${timeoutMs} ms; last: ${JSON.stringify(blocks.slice(-5))}`));
            }, timeoutMs);
            const cleanup = () => {
              clearTimeout(timer);
              waiters.delete(check);
            };
            waiters.add(check);
            check();
          });
        },
      };
      res.on('data', (text: string) => {
        const taken = takeSseBlocks(buffer + text);
        buffer = taken.rest;
        for (const block of taken.blocks) {
          blocks.push(block);
          reader.onBlock?.(block);
        }
        for (const w of [...waiters]) w();
      });
      resolve(reader);
    });
    req.on('error', reject);
  });
}

/** A parsed `upstream` event's state, or undefined for any other block. */
export function upstreamState(b: SseBlock): string | undefined {
  if (b.event !== 'upstream' || b.data === undefined) return undefined;
  return (JSON.parse(b.data) as { state: string }).state;
}

/** Sends a raw HTTP/1.1 request (exact request target, exact headers) and reads the whole answer. */
export function rawRequest(
  baseUrl: string,
  opts: { method: string; target: string; headers?: Record<string, string>; body?: Buffer | string },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method: opts.method, path: opts.target, headers: opts.headers ?? {}, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}
