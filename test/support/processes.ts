/**
 * Real processes for end-to-end tests: the control plane (`packages/server/bin/mm-server.mjs`)
 * and the board agent (`packages/agent/bin/mm-agent.mjs --simulate`), each with its own
 * folders, on free ports, their JSON log lines kept for assertions.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createScratchDatabase, type DbKind } from './databases.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SERVER_BIN = path.join(repoRoot, 'packages/server/bin/mm-server.mjs');
const AGENT_BIN = path.join(repoRoot, 'packages/agent/bin/mm-agent.mjs');

export type LogLine = Record<string, unknown> & { msg?: string };

/** The output of a process, line by line; JSON lines parsed. */
export class ProcessOutput {
  readonly lines: LogLine[] = [];
  readonly text: string[] = [];
  private waiters = new Set<() => void>();
  private partial = '';

  feed(chunk: Buffer | string): void {
    this.partial += chunk.toString();
    let nl: number;
    while ((nl = this.partial.indexOf('\n')) >= 0) {
      const line = this.partial.slice(0, nl);
      this.partial = this.partial.slice(nl + 1);
      this.text.push(line);
      try {
        const parsed = JSON.parse(line) as unknown;
        if (parsed && typeof parsed === 'object') this.lines.push(parsed as LogLine);
      } catch {
        // not JSON (e.g. a stack trace on stderr): kept in `text` only
      }
      for (const w of [...this.waiters]) w();
    }
  }

  /** The first line (seen or coming) that matches. */
  async waitFor(match: (l: LogLine) => boolean, what: string, timeoutMs = 30_000, exited?: Promise<unknown>): Promise<LogLine> {
    const deadline = Date.now() + timeoutMs;
    let gone = false;
    void exited?.then(() => {
      gone = true;
      for (const w of [...this.waiters]) w();
    });
    for (;;) {
      const found = this.lines.find(match);
      if (found) return found;
      if (gone) throw new Error(`the process exited before logging ${what}; last lines:\n${this.text.slice(-15).join('\n')}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no log line ${what} within ${timeoutMs} ms; last lines:\n${this.text.slice(-15).join('\n')}`);
      await new Promise<void>((resolve) => {
        const w = () => {
          this.waiters.delete(w);
          clearTimeout(t);
          resolve();
        };
        const t = setTimeout(w, Math.min(left, 1000));
        this.waiters.add(w);
      });
    }
  }
}

interface Spawned {
  child: ChildProcess;
  output: ProcessOutput;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function spawnNode(file: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, nodeArgs: string[] = []): Spawned {
  return spawnChild(process.execPath, [...nodeArgs, file, ...args], env, cwd);
}

function spawnChild(command: string, argv: string[], env: NodeJS.ProcessEnv, cwd: string): Spawned {
  const child = spawn(command, argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = new ProcessOutput();
  child.stdout!.on('data', (d: Buffer) => output.feed(d));
  child.stderr!.on('data', (d: Buffer) => output.feed(d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output, exited };
}

/** The environment of a child without the parent's settings that would leak into it. */
function cleanEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('MM_') || k === 'DATABASE_URL' || k === 'PORT' || k === 'HOST') delete env[k];
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

// ── the control plane ─────────────────────────────────────────────────────────────

export interface ServerProcess {
  url: string;
  port: number;
  dataDir: string;
  pid: number;
  output: ProcessOutput;
  exited: Spawned['exited'];
  api(pathname: string, init?: RequestInit): Promise<Response>;
  /** SIGTERM (graceful) and wait for the exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): Promise<void>;
}

export interface ServerCluster {
  kind: DbKind;
  dataDir: string;
  /** The scratch database on the real PostgreSQL (postgres kind), for tests that seed it directly. */
  databaseUrl: string | undefined;
  /** Starts (or starts again, on the same port, folder and database) the server process. */
  start(env?: Record<string, string>): Promise<ServerProcess>;
  current(): ServerProcess;
  /** Stops the server if running; removes its folder and scratch database. */
  cleanup(): Promise<void>;
}

/** A control plane that can be stopped and started again on the same data (restart tests). */
export async function serverCluster(
  kind: DbKind,
  baseEnv: Record<string, string> = {},
  nodeArgs: string[] = [],
  /** The server's entry: the workspace's bin (default) or a bundle's mm-server.mjs. */
  entry: string = SERVER_BIN,
): Promise<ServerCluster> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-e2e-server-'));
  const scratch = kind === 'postgres' ? await createScratchDatabase() : undefined;
  let port = 0;
  let running: ServerProcess | undefined;
  return {
    kind,
    dataDir,
    databaseUrl: scratch?.url,
    current() {
      if (!running) throw new Error('the server is not running');
      return running;
    },
    async start(env = {}) {
      const spawned = spawnNode(
        entry,
        [],
        cleanEnv({
          HOST: '127.0.0.1',
          PORT: String(port),
          MM_DATA_DIR: dataDir,
          DATABASE_URL: scratch?.url ?? '',
          LOG_LEVEL: 'info',
          ...baseEnv,
          ...env,
        }),
        repoRoot,
        nodeArgs,
      );
      let listening: LogLine;
      try {
        // Generous: a first start initialises the embedded database, slow on a loaded machine.
        listening = await spawned.output.waitFor((l) => l.msg === 'control plane listening', 'control plane listening', 180_000, spawned.exited);
      } catch (err) {
        // A server that never came up must not keep writing into the folder cleanup() removes.
        spawned.child.kill('SIGKILL');
        await spawned.exited;
        throw err;
      }
      const url = String(listening.url);
      port = Number(new URL(url).port);
      const server: ServerProcess = {
        url,
        port,
        dataDir,
        pid: spawned.child.pid!,
        output: spawned.output,
        exited: spawned.exited,
        api: (pathname, init) => fetch(new URL(pathname, url), init),
        async stop() {
          if (spawned.child.exitCode === null && spawned.child.signalCode === null) spawned.child.kill('SIGTERM');
          const r = await spawned.exited;
          if (running === server) running = undefined;
          return r;
        },
        async kill() {
          spawned.child.kill('SIGKILL');
          await spawned.exited;
          if (running === server) running = undefined;
        },
      };
      running = server;
      return server;
    },
    async cleanup() {
      await running?.stop();
      await scratch?.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

// ── the agent ───────────────────────────────────────────────────────────────────────

export interface AgentProcess {
  pid: number;
  agentDir: string;
  /** A value only this agent's environment (and so its runners') holds: finds its runner processes. */
  marker: string;
  output: ProcessOutput;
  exited: Spawned['exited'];
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** kill -9: no goodbye, no journal flush beyond what is on disk. */
  kill9(): Promise<void>;
}

export async function startAgent(opts: {
  serverUrl: string;
  /** The board token; leave it out when `env` gives MM_BOARD_TOKEN_FILE (and maybe MM_PROVISIONING_KEY). */
  token?: string;
  agentDir: string;
  env?: Record<string, string>;
  /** Node's own options (e.g. --cpu-prof for a benchmark). */
  nodeArgs?: string[];
  /** The agent's entry: the workspace's bin (default) or a bundle's mm-agent.mjs. */
  entry?: string;
  /** An executable that starts the agent instead of node (deploy/agent/mm-agent-start); gets `--simulate`. */
  launcher?: string;
}): Promise<AgentProcess> {
  await fs.mkdir(opts.agentDir, { recursive: true });
  const marker = `mm-e2e-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const env = cleanEnv({
    MM_SERVER_URL: opts.serverUrl,
    ...(opts.token !== undefined ? { MM_BOARD_TOKEN: opts.token } : {}),
    MM_AGENT_DIR: opts.agentDir,
    MM_SIM_GPIO_PORT: '0',
    MM_RECONNECT_MAX_DELAY_MS: '1000',
    LOG_LEVEL: 'info',
    MM_E2E_MARKER: marker,
    ...opts.env,
  });
  const spawned = opts.launcher
    ? spawnChild(opts.launcher, ['--simulate'], env, repoRoot)
    : spawnNode(opts.entry ?? AGENT_BIN, ['--simulate'], env, repoRoot, opts.nodeArgs);
  return {
    pid: spawned.child.pid!,
    agentDir: opts.agentDir,
    marker,
    output: spawned.output,
    exited: spawned.exited,
    async stop() {
      if (spawned.child.exitCode === null && spawned.child.signalCode === null) spawned.child.kill('SIGTERM');
      return spawned.exited;
    },
    async kill9() {
      spawned.child.kill('SIGKILL');
      await spawned.exited;
    },
  };
}

/** Pids of live processes whose environment holds MM_E2E_MARKER=<marker> (Linux /proc). */
export async function pidsWithMarker(marker: string, except: number[] = []): Promise<number[]> {
  const found: number[] = [];
  for (const name of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (except.includes(pid)) continue;
    try {
      const env = await fs.readFile(`/proc/${pid}/environ`, 'latin1');
      if (!env.split('\0').includes(`MM_E2E_MARKER=${marker}`)) continue;
      const stat = await fs.readFile(`/proc/${pid}/stat`, 'latin1');
      // Zombies (state Z) are gone in all but name.
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      found.push(pid);
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
  return found;
}

/**
 * Whether `pid` is a live process: not gone and not a zombie. Where PID 1 does not reap
 * orphans (a container without an init, like CI's), a killed runner whose parent died first
 * stays a zombie, and `process.kill(pid, 0)` still succeeds for it.
 */
export async function isLiveProcess(pid: number): Promise<boolean> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'latin1').catch(() => undefined);
  if (stat === undefined) return false;
  return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

export { eventually } from './eventually.ts';
