/**
 * Time from a hang to back in service on the simulated board (docs/power.md, "Time to
 * recover"). By hand, prints figures; not a test (the test is test/e2e/power.test.ts):
 *
 *   DATABASE_URL=postgres://… npx tsx bench/recovery-time.ts [--rounds 3] [--hang-detect-s 10] [--heartbeat-timeout-ms 3000] [--off-s 1]
 *
 * Starts the control plane in this process on a scratch database, Debian's pdudaemon with a
 * `localcmdline` PDU that starts and cuts a simulated board's agent (test/support/power-switch.mjs),
 * a lab host agent relaying to it, and the board. Defines one health check (the simulated
 * runner, 0.2 s and its video). Each round hangs the board (a run with `{ "hang": "board" }`)
 * and follows its incident: silent link → unresponsive → power cycle → linked again → health
 * check passed → back in service. Before the next round the hung run must have ended. Prints each phase and the total (the incident's
 * `recovery_seconds`, what `mm_board_recovery_seconds` observes).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { loadConfig, startServer } from '@mm/server';
import { upload } from '../test/faults/fault-support.ts';
import { createScratchDatabase } from '../test/support/databases.ts';
import { plugIn, POWER_SWITCH, startPdudaemon } from '../test/support/pdudaemon.ts';
import { repoRoot, startAgent } from '../test/support/processes.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const rounds = arg('--rounds', 3);
const hangDetectS = arg('--hang-detect-s', 10);
const heartbeatTimeoutMs = arg('--heartbeat-timeout-ms', 3000);
const offS = arg('--off-s', 1);
const HEARTBEAT = { MM_HEARTBEAT_INTERVAL_MS: String(Math.max(100, Math.round(heartbeatTimeoutMs / 6))), MM_HEARTBEAT_TIMEOUT_MS: String(heartbeatTimeoutMs) };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-recovery-bench-'));
const scratch = await createScratchDatabase();
const pdu = await startPdudaemon(path.join(workDir, 'pdu'));
const server = await startServer({
  config: loadConfig({
    PORT: '0',
    MM_DATA_DIR: path.join(workDir, 'data'),
    DATABASE_URL: scratch.url,
    LOG_LEVEL: 'silent',
    ...HEARTBEAT,
    MM_HANG_DETECT_S: String(hangDetectS),
    MM_POWER_CYCLE_OFF_S: String(offS),
    // Each round takes one cycle from the window: room for all of them, and a second try each.
    MM_RECOVER_MAX: String(2 * rounds + 1),
  }),
});
const api = async (method: string, p: string, body?: unknown) => {
  const res = await fetch(new URL(p, server.url), {
    method,
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return (await res.json()) as any;
};
const board = (id: string) => api('GET', `/api/boards/${id}/`);
let labHost: Awaited<ReturnType<typeof startAgent>> | undefined;
try {
  const lab = await api('POST', '/api/boards/', { name: 'lab-host' });
  labHost = await startAgent({ serverUrl: server.url, token: lab.token, agentDir: path.join(workDir, 'lab-host'), env: { MM_PDUDAEMON_URL: pdu.url, ...HEARTBEAT } });
  const b = await api('POST', '/api/boards/', { name: 'bench-board' });
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('MM_') && k !== 'DATABASE_URL' && k !== 'PORT') env[k] = v;
  Object.assign(env, { MM_SERVER_URL: server.url, MM_BOARD_TOKEN: b.token, MM_AGENT_DIR: path.join(workDir, 'board'), MM_SIM_GPIO_PORT: '0', MM_RECONNECT_MAX_DELAY_MS: '300', LOG_LEVEL: 'warn', ...HEARTBEAT });
  await plugIn(pdu, 1, { argv: [process.execPath, path.join(repoRoot, 'packages/agent/bin/mm-agent.mjs'), '--simulate'], env, cwd: repoRoot, marker: `mm-bench-${process.pid}`, log: path.join(workDir, 'board.log') });
  await until('the lab host', async () => ((await board(lab.id)).status === 'online' ? true : undefined));
  await api('PATCH', `/api/boards/${b.id}/`, { labels: { bench: 'yes' }, power: { controller_board_id: lab.id, pdu_hostname: 'lab-pdu', pdu_port: 1 } });
  const newInvocation = async (name: string, params: unknown) => {
    const { id } = await api('POST', '/api/invocations/create/', { name, description: 'recovery bench' });
    await upload(server.url, id, 'parameter', 'p.json', Buffer.from(JSON.stringify(params)));
    return id as number;
  };
  const check = await newInvocation('check', { duration_s: 0.2 });
  await api('POST', '/api/health-checks/', { name: 'bench-check', invocation_id: check, board_selector: { bench: 'yes' }, interval_s: 86_400 });
  await api('POST', `/api/boards/${b.id}/power/`, { action: 'on' });
  await until('the board', async () => ((await board(b.id)).health === 'good' ? true : undefined));
  const hang = await newInvocation('hang', { hang: 'board' });

  const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');
  console.log(
    `settings: MM_HEARTBEAT_INTERVAL_MS=${HEARTBEAT.MM_HEARTBEAT_INTERVAL_MS} MM_HEARTBEAT_TIMEOUT_MS=${heartbeatTimeoutMs} MM_HANG_DETECT_S=${hangDetectS} MM_POWER_CYCLE_OFF_S=${offS} MM_RECOVER_MAX=${2 * rounds + 1}; one health check (0.2 s run); load ${load()}`,
  );
  console.log('round  silent→detected  detected→cycle done  cycle→linked  linked→checked  total (hang→in service)');
  const totals: number[] = [];
  let lastRun: number | undefined;
  for (let round = 1; round <= rounds; round++) {
    const seen = (await api('GET', `/api/boards/${b.id}/incidents/`)).incidents.length;
    // The last round's hung run must have ended (the board's new agent reports it gone): a run queued behind it would never start.
    if (lastRun !== undefined) {
      const id = lastRun;
      await until(`run ${id} to end`, async () => (['succeeded', 'failed', 'cancelled'].includes((await api('GET', `/api/operations/${id}/`)).status) ? true : undefined));
    }
    const started = await fetch(new URL(`/api/invocations/${hang}/execute/`, server.url), { method: 'POST', headers: { 'content-type': 'application/json', prefer: 'respond-async' }, body: JSON.stringify({ board_id: b.id }) });
    lastRun = ((await started.json()) as { id: number }).id;
    const incident = await until('recovery', async () => {
      const list = (await api('GET', `/api/boards/${b.id}/incidents/`)).incidents;
      const i = list.length > seen ? list[0] : undefined;
      if (i?.outcome === 'bad') throw new Error(`round ${round}: recovery gave up: ${i.reason}`);
      return i?.outcome === 'recovered' ? i : undefined;
    });
    const cycleOp = await api('GET', `/api/operations/${incident.actions[0].operation_ids[0]}/`);
    const t = (iso: string) => new Date(iso).getTime() / 1000;
    const detect = t(incident.detected_at) - t(incident.started_at);
    const cycle = t(cycleOp.finished_at) - t(incident.detected_at);
    // The recovery starts the health checks on the sweep that sees the new link (within a sweep of it).
    const checksAt = t(incident.actions.find((a: { action: string }) => a.action === 'health_check').at);
    const linked = checksAt - t(cycleOp.finished_at);
    const checked = t(incident.recovered_at) - checksAt;
    totals.push(incident.recovery_seconds);
    const cycles = incident.actions.filter((a: { action: string }) => a.action === 'power_cycle').length;
    console.log(
      `${String(round).padStart(5)}  ${detect.toFixed(1).padStart(15)} s  ${cycle.toFixed(1).padStart(17)} s  ${linked.toFixed(1).padStart(10)} s  ${checked.toFixed(1).padStart(12)} s  ${incident.recovery_seconds.toFixed(1).padStart(10)} s${cycles > 1 ? ` (${cycles} cycles: the first boot took longer than MM_HANG_DETECT_S)` : ''}`,
    );
  }
  totals.sort((x, y) => x - y);
  console.log(`load at the end ${load()}`);
  console.log(`median ${totals[Math.floor(totals.length / 2)]!.toFixed(1)} s over ${rounds} rounds (from when the board was last heard: silent→detected is MM_HANG_DETECT_S plus up to one sweep, a quarter of it at most 5 s; the link itself is dropped after MM_HEARTBEAT_TIMEOUT_MS, within that)`);
} finally {
  spawnSync(process.execPath, [POWER_SWITCH, 'off', '1', pdu.dir]);
  await labHost?.stop();
  await server.close();
  await pdu.stop();
  await scratch.drop();
  await fs.rm(workDir, { recursive: true, force: true });
}
