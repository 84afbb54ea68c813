/**
 * The agent update's run (agent-update-kind.ts) with its board row, bus and clock in hand:
 * after the switch it waits for the board's hello as a `board.status` event (no reads of the
 * row while nothing happens), and its deadline runs on the injected clock.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '@mm/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAgentUpdateKind } from '../src/agent-update/agent-update-kind.ts';
import type { BoardHello } from '../src/agent-update/board-hello.ts';
import { UploadRegistry } from '../src/agent-link/uploads.ts';
import { InProcessEventBus } from '../src/events/event-bus.ts';
import { OperationKindRegistry, type OperationHelpers, type OperationToRun } from '../src/operations/kinds.ts';

const BOARD = '5f0c6a1e-8d2b-4a7e-9d51-2b3c4d5e6f70';
const OTHER = '6a1e5f0c-8d2b-4a7e-9d51-2b3c4d5e6f71';
const OLD = '0.1.0';
const NEW = '0.2.0';
const TIMEOUT_MS = 20_000;
/** The timeout and the server's grace after it (ROLLBACK_GRACE_MS). */
const DEADLINE_MS = TIMEOUT_MS + 60_000;

let packagesDir: string;

beforeAll(async () => {
  packagesDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-agent-update-kind-'));
  await fs.writeFile(path.join(packagesDir, `mm-agent_${NEW}_amd64.deb`), 'not really a package');
});

afterAll(async () => {
  await fs.rm(packagesDir, { recursive: true, force: true });
});

/** One agent_update run on a board whose row the test holds; the agent answers both calls. */
function startRun() {
  const clock = new ManualClock();
  const bus = new InProcessEventBus();
  let row: BoardHello | undefined = { connectedAt: new Date(clock.now() - 60_000), agentVersion: OLD };
  let reads = 0;
  const kinds = new OperationKindRegistry();
  registerAgentUpdateKind(kinds, {
    board: async (id) => {
      expect(id).toBe(BOARD);
      reads++;
      return row;
    },
    bus,
    uploads: new UploadRegistry(),
    packagesDir,
    timeoutMs: TIMEOUT_MS,
    clock,
  });
  const abort = new AbortController();
  const calls: string[] = [];
  const logs: string[] = [];
  let switched!: () => void;
  const switchedP = new Promise<void>((r) => (switched = r));
  const helpers = {
    boardId: BOARD,
    signal: abort.signal,
    async call(method: string) {
      calls.push(method);
      if (method === 'agent.info') return { agent_version: OLD, arch: 'amd64' };
      switched();
      return {};
    },
    async log(text: string) {
      logs.push(text);
    },
    progress() {},
    expectReboot: () => {
      throw new Error('not used');
    },
  } as unknown as OperationHelpers;
  const op = { id: 1, kind: 'agent_update', params: { version: NEW } } as unknown as OperationToRun;
  const run = kinds.get('agent_update')!.run(op, helpers);
  run.catch(() => undefined);
  /** Lets the run's awaits (the row, the log, the package folder) go on. */
  const settle = async () => {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  };
  return {
    clock,
    bus,
    run,
    abort,
    calls,
    logs,
    settle,
    reads: () => reads,
    /** The run has sent `agent.update` and waits for the board. */
    switched: async () => {
      await switchedP;
      await settle();
    },
    /** The board says hello again (its row first, then the event, as the hub does). */
    hello(agentVersion: string | null, boardId = BOARD) {
      if (boardId === BOARD) row = { connectedAt: new Date(clock.now()), agentVersion };
      bus.publish('board.status', boardId, { boardId, status: 'online', connectedAt: new Date(clock.now()).toISOString() });
    },
    deleteBoard() {
      row = undefined;
      bus.publish('board.revoked', BOARD, { boardId: BOARD });
    },
  };
}

describe('agent_update waits for the board on events', () => {
  it('reads nothing while the board restarts, and succeeds on the hello with the new version', async () => {
    const t = startRun();
    await t.switched();
    expect(t.calls).toEqual(['agent.info', 'agent.update']);
    const readsBefore = t.reads();
    // A minute of nothing: no poll of the row (the old run read it every 500 ms).
    t.clock.advance(60_000);
    await t.settle();
    expect(t.reads()).toBe(readsBefore);
    // Another board's hello is not this one's.
    t.hello(NEW, OTHER);
    await t.settle();
    expect(t.reads()).toBe(readsBefore);
    // Offline then ready events do not count either.
    t.bus.publish('board.status', BOARD, { boardId: BOARD, status: 'offline' });
    await t.settle();
    expect(t.reads()).toBe(readsBefore);
    t.hello(NEW);
    await expect(t.run).resolves.toEqual({ board_id: BOARD, version: NEW, previous_version: OLD });
    expect(t.reads()).toBe(readsBefore + 1);
    expect(t.logs.at(-1)).toBe(`the board reconnected with ${NEW}\n`);
    expect(t.clock.pending).toBe(0);
  });

  it('fails update_rolled_back when the board comes back with the old version', async () => {
    const t = startRun();
    await t.switched();
    t.hello(OLD);
    await expect(t.run).rejects.toMatchObject({ code: 'update_rolled_back', result: { running_version: OLD, version: NEW, previous_version: OLD } });
    expect(t.clock.pending).toBe(0);
  });

  it('fails update_rolled_back at the deadline on the injected clock, not before', async () => {
    const t = startRun();
    await t.switched();
    let ended = false;
    t.run.finally(() => (ended = true)).catch(() => undefined);
    t.clock.advance(DEADLINE_MS - 1);
    await t.settle();
    expect(ended).toBe(false);
    t.clock.advance(1);
    await expect(t.run).rejects.toMatchObject({ code: 'update_rolled_back', message: expect.stringContaining('did not reconnect within 80 s') });
  });

  it('fails board_not_found when the board is deleted meanwhile', async () => {
    const t = startRun();
    await t.switched();
    t.deleteBoard();
    await expect(t.run).rejects.toMatchObject({ code: 'board_not_found' });
  });

  it('stops waiting when the operation is cancelled', async () => {
    const t = startRun();
    await t.switched();
    t.abort.abort(new Error('cancelled'));
    await expect(t.run).rejects.toThrow('cancelled');
    expect(t.clock.pending).toBe(0);
  });
});
