import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { simulatedXlnxConfigPath } from '../../packages/agent/src/simulate/xlnx-config/index.ts';
import { json } from '../support/http.ts';
import type { TestServer } from '../support/test-server.ts';
import { eventually, getBoard, postJson, SAMPLE_PAC, startPacServer } from './pacs-support.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const AGENT_BIN = path.join(repoRoot, 'packages/agent/bin/mm-agent.mjs');

/**
 * Row 11 through an agent WITHOUT --simulate: the board's own commands, as on a real board.
 * MM_XLNX_CONFIG is an xlnx-config executable (the simulated one, given its folders by
 * environment) and MM_REBOOT a command line. A reboot command "reboots" the way a real one
 * looks from the outside (a new boot id, and the agent stopped by the shutdown; the test
 * starts it again, as systemd does at boot), or fails.
 */
describe('PAC activation with the board commands of a real board (embedded database)', () => {
  let server: TestServer;
  let root: string;
  let agent: BoardAgent | undefined;

  beforeAll(async () => {
    server = await startPacServer('embedded', { MM_REBOOT_TIMEOUT_S: '120' });
  });
  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
    if (root) await fs.rm(root, { recursive: true, force: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  interface BoardAgent {
    boardId: string;
    /** How many times the agent process was started. */
    starts: () => number;
    stop(): Promise<void>;
  }

  /** Registers a board and runs its agent; `restartOnExit` starts it again whenever it exits (systemd after a reboot). */
  async function startBoardAgent(name: string, reboot: string, restartOnExit: boolean, xlnxConfig = simulatedXlnxConfigPath): Promise<BoardAgent> {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-pac-board-'));
    const bootIdFile = path.join(root, 'boot_id');
    await fs.writeFile(bootIdFile, 'boot-1\n');
    const res = await postJson(server, '/api/boards/', { name });
    const { id, token } = await json(res);
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('MM_')) delete env[k];
    Object.assign(env, {
      MM_SERVER_URL: server.url,
      MM_BOARD_TOKEN: token,
      MM_AGENT_DIR: path.join(root, 'agent'),
      MM_RUNNER: 'true',
      MM_XLNX_CONFIG: xlnxConfig,
      MM_PAC_DIR: path.join(root, 'pacs'),
      MM_SIM_STATE_DIR: path.join(root, 'xlnx-config-state'),
      MM_BOOT_ID_FILE: bootIdFile,
      MM_REBOOT: reboot,
      MM_RECONNECT_MAX_DELAY_MS: '200',
      LOG_LEVEL: process.env.PAC_TEST_AGENT_LOG ?? 'info',
    });
    const output: string[] = [];
    let child: ChildProcess | undefined;
    let stopping = false;
    let starts = 0;
    const start = () => {
      starts++;
      const proc = spawn(process.execPath, [AGENT_BIN], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
      proc.stdout!.on('data', (c: Buffer) => output.push(c.toString()));
      proc.stderr!.on('data', (c: Buffer) => output.push(c.toString()));
      proc.once('exit', () => {
        if (!stopping && restartOnExit) start();
      });
      child = proc;
    };
    start();
    await eventually(async () => expect((await getBoard(server, id)).status).toBe('online'), 30_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${output.join('').slice(-3000)}`);
    });
    return {
      boardId: id,
      starts: () => starts,
      async stop() {
        stopping = true;
        const proc = child;
        if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
        const exited = new Promise((resolve) => proc.once('exit', resolve));
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
      },
    };
  }

  it('a reboot command that reboots: the PAC is active once the board is back with its new boot id', async () => {
    const script = path.join(os.tmpdir(), `mm-pac-reboot-${process.pid}-${Date.now()}.sh`);
    // Stands in for `systemctl reboot`: the next boot's id, then the shutdown stops the agent.
    await fs.writeFile(script, '#!/bin/sh\ncat /proc/sys/kernel/random/uuid > "$MM_BOOT_ID_FILE"\nkill -TERM "$PPID"\n');
    try {
      agent = await startBoardAgent('real-reboot', `/bin/sh ${script}`, true);
      const res = await postJson(server, '/api/pacs/activate/', { board_id: agent.boardId, pac: SAMPLE_PAC });
      const body = await json(res);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({ status: 'succeeded', result: { previous_boot_id: 'boot-1', active: SAMPLE_PAC } });
      expect(body.result.boot_id).not.toBe('boot-1');
      expect(agent.starts()).toBe(2);
      expect(await getBoard(server, agent.boardId)).toMatchObject({ status: 'online', active_pac: SAMPLE_PAC, boot_id: body.result.boot_id });
    } finally {
      await fs.rm(script, { force: true });
    }
  });

  it('a reboot command that fails: the agent reconnects at once and the activation fails reboot_not_observed', async () => {
    agent = await startBoardAgent('failing-reboot', 'false', false);
    const res = await postJson(server, '/api/pacs/activate/', { board_id: agent.boardId, pac: SAMPLE_PAC });
    expect(res.status).toBe(502);
    const body = await json(res);
    // Not reboot_timeout: the board's return with the same boot id ends the wait.
    expect(body.operation.error).toMatchObject({ code: 'reboot_not_observed' });
    expect(agent.starts()).toBe(1);
    expect(await getBoard(server, agent.boardId)).toMatchObject({ status: 'online', boot_id: 'boot-1' });
  });

  it('an xlnx-config -a that fails: the activation fails with its output, and nothing reboots', async () => {
    const wrapper = path.join(os.tmpdir(), `mm-pac-xlnx-config-${process.pid}-${Date.now()}`);
    // xlnx-config whose -q works and whose -a fails, as when bootgen cannot write the boot partition.
    await fs.writeFile(
      wrapper,
      `#!/bin/sh\nif [ "$1" = "-a" ]; then\n  echo "Activating assets for  $2 on the zcu104"\n  echo "* ERROR: bootgen failed: cannot write /boot/firmware/boot.bin *" >&2\n  exit 1\nfi\nexec "${simulatedXlnxConfigPath}" "$@"\n`,
      { mode: 0o755 },
    );
    try {
      agent = await startBoardAgent('failing-xlnx-config', 'false', false, wrapper);
      const res = await postJson(server, '/api/pacs/activate/', { board_id: agent.boardId, pac: SAMPLE_PAC });
      expect(res.status).toBe(502);
      const { operation } = await json(res);
      expect(operation.error.code).toBe('xlnx_config_failed');
      expect(operation.error.message).toContain('bootgen failed: cannot write /boot/firmware/boot.bin');
      const log = await (await server.api(`/api/operations/${operation.id}/log/`)).text();
      expect(log).toContain('bootgen failed');
      expect(log).not.toContain('rebooting the board');
      expect(await getBoard(server, agent.boardId)).toMatchObject({ status: 'online', boot_id: 'boot-1' });
    } finally {
      await fs.rm(wrapper, { force: true });
    }
  });
});
