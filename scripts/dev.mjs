#!/usr/bin/env node
// `pnpm start`: Model Manager on a laptop. Starts the control plane (embedded database in
// ./data unless DATABASE_URL is set) and a simulated board already registered and connected:
// its token is kept in <data dir>/dev-board.json and reused while that board exists.
// Ctrl-C (or SIGTERM) stops both.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const dataDir = path.resolve(root, process.env.MM_DATA_DIR || 'data');
const host = process.env.HOST || '127.0.0.1';
const port = process.env.PORT || '8000';
const localHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
const serverUrl = `http://${localHost}:${port}`;
const apiToken = process.env.MM_API_TOKEN || undefined;
const boardFile = path.join(dataDir, 'dev-board.json');

const children = new Set();
let stopping = false;
let finalCode = 0;
const running = (child) => child && child.exitCode === null && child.signalCode === null;

function start(name, file, args, env, nodeArgs = []) {
  const child = spawn(process.execPath, [...nodeArgs, file, ...args], { cwd: root, stdio: 'inherit', env });
  children.add(child);
  child.on('exit', (code, signal) => {
    children.delete(child);
    if (!stopping) {
      console.error(`dev: ${name} exited (${signal ?? `code ${code}`})`);
      if (name === 'control plane') void stop(code ?? 1);
    } else if (children.size === 0) {
      process.exit(finalCode);
    }
  });
  return child;
}

async function stop(exitCode = 0) {
  if (stopping) {
    // A second Ctrl-C: no more waiting.
    for (const c of children) c.kill('SIGKILL');
    process.exit(exitCode || 130);
  }
  stopping = true;
  finalCode = exitCode;
  // The agent first, so it does not spend the server's shutdown reconnecting.
  if (running(agent)) {
    const gone = new Promise((resolve) => agent.once('exit', resolve));
    agent.kill('SIGTERM');
    await gone;
  }
  if (running(server)) server.kill('SIGTERM');
  if (children.size === 0) process.exit(finalCode);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());

const api = (pathname, init = {}) =>
  fetch(new URL(pathname, serverUrl), {
    ...init,
    headers: { ...(init.headers ?? {}), ...(apiToken ? { authorization: `Bearer ${apiToken}` } : {}) },
  });

async function waitForHealth(timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!stopping) {
    try {
      const res = await api('/api/health/');
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the control plane did not answer ${serverUrl}/api/health/ within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The simulated board: the one saved before if the server still has it, otherwise a new one. */
async function simulatedBoard() {
  try {
    const saved = JSON.parse(await fs.readFile(boardFile, 'utf8'));
    if (typeof saved.id === 'string' && typeof saved.token === 'string') {
      const res = await api(`/api/boards/${saved.id}/`);
      if (res.ok) return { ...saved, reused: true };
    }
  } catch {
    // none saved yet, or unreadable: register a new one
  }
  const res = await api('/api/boards/', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'simulated-board' }),
  });
  if (res.status !== 201) throw new Error(`registering the simulated board failed: ${res.status} ${await res.text()}`);
  const board = await res.json();
  await fs.mkdir(dataDir, { recursive: true });
  await fs.writeFile(boardFile, `${JSON.stringify({ id: board.id, name: board.name, token: board.token }, null, 2)}\n`, { mode: 0o600 });
  return { id: board.id, name: board.name, token: board.token, reused: false };
}

// The server's node flags, as deploy/server/Dockerfile runs it (see there).
const server = start('control plane', path.join(root, 'packages/server/bin/mm-server.mjs'), [], { ...process.env, MM_DATA_DIR: dataDir }, ['--min-semi-space-size=16', '--initial-old-space-size=128']);
let agent;

try {
  await waitForHealth();
  if (stopping) process.exit(0);
  const board = await simulatedBoard();
  const agentEnv = { ...process.env, MM_SERVER_URL: serverUrl, MM_BOARD_TOKEN: board.token, MM_AGENT_DIR: path.join(dataDir, 'agent') };
  delete agentEnv.DATABASE_URL;
  // The agent's node flag, as deploy/agent/mm-agent.service runs it (see there).
  agent = start('simulated board agent', path.join(root, 'packages/agent/bin/mm-agent.mjs'), ['--simulate'], agentEnv, ['--initial-old-space-size=128']);
  console.log(
    [
      '',
      `  Model Manager is running at ${serverUrl}/`,
      `  API documentation:  ${serverUrl}/api/docs/`,
      `  Simulated board:    ${board.name} (${board.id}), ${board.reused ? 'registered before' : 'just registered'}; token in ${path.relative(root, boardFile) || boardFile}`,
      `  Try:  curl -X POST ${serverUrl}/api/invocations/create/ -H 'content-type: application/json' -d '{"name":"demo","description":""}'`,
      '  Ctrl-C stops the control plane and the simulated board.',
      '',
    ].join('\n'),
  );
} catch (err) {
  console.error(`dev: ${err instanceof Error ? err.message : String(err)}`);
  await stop(1);
}
