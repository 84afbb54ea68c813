#!/usr/bin/env node
// `pnpm start`: Model Manager on a laptop. Starts the control plane (embedded database in
// ./data unless DATABASE_URL is set) and a simulated board already registered and connected:
// its token is kept in <data dir>/dev-board.json and reused while that board exists. The board
// is registered in the database before the server starts (no API token needed with auth on).
// Ctrl-C (or SIGTERM) stops both.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
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
const serverBin = path.join(root, 'packages/server/bin/mm-server.mjs');
// The same node flags as the server's image and the agent's unit (test/deploy/configs.unit.test.ts).
const SERVER_NODE_FLAGS = ['--min-semi-space-size=16', '--initial-old-space-size=128'];
const AGENT_NODE_FLAGS = ['--initial-old-space-size=128'];
/** The GPIO motor script's port in its catalogue entry (packages/gpio-motor's DEFAULT_MOTOR_PORT). */
const GPIO_PORT = 8765;

const children = new Set();
let stopping = false;
let finalCode = 0;
const running = (child) => child && child.exitCode === null && child.signalCode === null;

/**
 * The agent logs JSON lines; on a terminal they go through the control plane's readable
 * format too (packages/server/src/log-pretty.ts, loaded with tsx as the workspace runs it).
 */
async function agentLogDestination() {
  const format = process.env.MM_LOG_FORMAT || 'auto';
  if (format === 'json' || (format === 'auto' && !process.stdout.isTTY)) return undefined;
  const { register } = await import('tsx/esm/api');
  register();
  const { prettyLogStream } = await import('../packages/server/src/log-pretty.ts');
  return prettyLogStream(process.stdout);
}

function start(name, file, args, env, nodeArgs = [], logTo = undefined) {
  // Its own process group: Ctrl-C on the terminal reaches this script only, which then stops
  // each child with one SIGTERM. (Sent to the whole group, the server got the terminal's SIGINT
  // and then this script's SIGTERM, took the second signal for "hurry" and exited without
  // closing the embedded database: its ids then jumped by ~32 at the next start.)
  const child = spawn(process.execPath, [...nodeArgs, file, ...args], { cwd: root, stdio: ['inherit', logTo ? 'pipe' : 'inherit', 'inherit'], env, detached: true });
  if (logTo) child.stdout.on('data', (chunk) => logTo.write(chunk));
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
// The terminal closed: its signal no longer reaches the children (own process groups).
process.on('SIGHUP', () => void stop());
// However this script ends, its children do not outlive it.
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

async function waitForHealth(timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!stopping) {
    try {
      const res = await fetch(new URL('/api/health/', serverUrl));
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the control plane did not answer ${serverUrl}/api/health/ within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Whether something on this machine already listens on `port`. */
function portTaken(port) {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (err) => resolve(err.code === 'EADDRINUSE' || err.code === 'EACCES'));
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () => probe.close(() => resolve(false)));
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * The simulated board, registered straight in the database by the server's own code before
 * the server starts (`mm-server dev-board`): no API token needed, whether auth is on or not.
 * The one saved before is reused while the database still has it. The catalogue's GPIO
 * motor entry is pointed at the port the simulated script will really listen on.
 */
function registerSimulatedBoard(gpioPort) {
  const r = spawnSync(process.execPath, [serverBin, 'dev-board', '--file', boardFile, '--gpio-port', String(gpioPort)], {
    cwd: root,
    env: { ...process.env, MM_DATA_DIR: dataDir },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0) {
    throw new Error(r.status === 3 ? `another control plane is using ${dataDir}: stop it first (or set MM_DATA_DIR)` : `registering the simulated board failed (exit ${r.status})`);
  }
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

/**
 * The webcam script's bundle, built once when missing, given to the catalogue's webcam entry
 * as its program (MM_WEBCAM_PROGRAM; only while that entry has none): the dashboard can deploy
 * it to the simulated board, whose supervisor runs it on the test pattern (MM_WEBCAM_SIMULATE=1).
 * A bundle that cannot be built leaves the entry without a program (said, not fatal).
 */
function webcamBundle() {
  if (process.env.MM_WEBCAM_PROGRAM) return process.env.MM_WEBCAM_PROGRAM;
  const bundle = path.join(root, 'packages/webcam/dist/mm-webcam.mjs');
  if (existsSync(bundle)) return bundle;
  const r = spawnSync(process.execPath, ['scripts/bundle.mjs'], { cwd: path.join(root, 'packages/webcam'), stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status === 0 && existsSync(bundle)) return bundle;
  console.error('dev: the webcam bundle could not be built (pnpm --filter @mm/webcam bundle): the webcam entry has no program to deploy');
  return undefined;
}

/**
 * How to run `mm` here, fast: its built file with node (instant) rather than `npx pnpm exec mm`
 * (~10 s a command); with `--server` when this server is not mm's default (PORT, HOST).
 */
function mmCommand({ server = true } = {}) {
  const built = path.join(root, 'packages/cli/dist/mm.mjs');
  const file = existsSync(built) ? built : path.join(root, 'packages/cli/bin/mm.mjs');
  const rel = path.relative(process.cwd(), file) || file;
  return `node ${rel}${!server || serverUrl === 'http://127.0.0.1:8000' ? '' : ` --server ${serverUrl}`}`;
}

/** Whether the agent packages are built where the server serves them (install commands need them). */
function agentPackagesBuilt() {
  const dir = path.resolve(root, process.env.MM_PACKAGES_DIR || 'dist/packages');
  try {
    return readdirSync(dir).some((f) => f.endsWith('.deb'));
  } catch {
    return false;
  }
}

/** What to try first, as it works here: with auth on, signing in comes first. */
function tryLines(board) {
  const mm = mmCommand();
  const run = `${mm} run --name demo`;
  if (apiToken) {
    return [`  Try:  ${run}          (mm reads MM_API_TOKEN, as this server does)`];
  }
  if (board.auth) {
    const user = board.users[0];
    if (!user) return ['  Auth is on but there is no admin: make one with `pnpm exec mm-server create-user <name> --role admin` (server stopped).'];
    return [
      `  Sign in:  ${mmCommand({ server: false })} login --server ${serverUrl} --username ${user}   (asks for the password; the dashboard takes the same)`,
      `  Then try: ${run}`,
    ];
  }
  return [
    `  Try:  ${run}          (runs on the simulated board, saves demo-<id>.mp4)`,
    `        curl -X POST ${serverUrl}/api/invocations/create/ -H 'content-type: application/json' -d '{"name":"demo","description":""}'`,
  ];
}

// The server's node flags, as deploy/server/Dockerfile runs it (see there).
let server;
let agent;

try {
  // The GPIO motor script's own port, unless another process holds it: then another one, said loudly.
  const gpioTaken = await portTaken(GPIO_PORT);
  const gpioPort = gpioTaken ? await freePort() : GPIO_PORT;
  const board = registerSimulatedBoard(gpioPort);
  const webcamProgram = webcamBundle();
  if (webcamProgram) process.env.MM_WEBCAM_PROGRAM = webcamProgram;
  server = start('control plane', serverBin, [], { ...process.env, MM_DATA_DIR: dataDir }, SERVER_NODE_FLAGS);
  await waitForHealth();
  if (stopping) process.exit(0);
  const agentEnv = { ...process.env, MM_SERVER_URL: serverUrl, MM_BOARD_TOKEN: board.token, MM_AGENT_DIR: path.join(dataDir, 'agent'), MM_SIM_GPIO_PORT: String(gpioPort) };
  delete agentEnv.DATABASE_URL;
  // The agent's node flag, as deploy/agent/mm-agent.service runs it (see there).
  agent = start('simulated board agent', path.join(root, 'packages/agent/bin/mm-agent.mjs'), ['--simulate'], agentEnv, AGENT_NODE_FLAGS, await agentLogDestination());
  console.log(
    [
      '',
      `  Model Manager is running at ${serverUrl}/`,
      `  API documentation:  ${serverUrl}/api/docs/`,
      `  Simulated board:    ${board.name} (${board.id}), ${board.reused ? 'registered before' : 'just registered'}; token in ${path.relative(root, boardFile) || boardFile}`,
      ...tryLines(board),
      ...(gpioTaken
        ? [
            '',
            `  !! Port ${GPIO_PORT}, the GPIO motor script's, is taken by another process: the simulated motor script`,
            `  !! listens on ${gpioPort} instead, and the device-script catalogue says so (mm motor, the dashboard's drive pad).`,
          ]
        : board.gpio_port_was !== undefined
          ? [`  The GPIO motor script is back on its port ${gpioPort} (the catalogue said ${board.gpio_port_was}).`]
          : []),
      ...(agentPackagesBuilt()
        ? []
        : ['', '  The agent packages are not built: install commands (new boards, provisioning keys) fail on a real board', '  until they are (npx -y pnpm@10 run package:agent).']),
      '  Ctrl-C stops the control plane and the simulated board.',
      '',
    ].join('\n'),
  );
} catch (err) {
  console.error(`dev: ${err instanceof Error ? err.message : String(err)}`);
  await stop(1);
}
