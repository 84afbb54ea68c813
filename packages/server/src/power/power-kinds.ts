import type { Clock } from '@mm/protocol';
import type { BoardLinks } from '../agent-link/board-links.ts';
import type { Db } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { OperationFailure, type OperationKindRegistry } from '../operations/kinds.ts';
import { boardNameOf, boardPowerOf, setPowerState } from './power-store.ts';

export const POWER_ACTIONS = ['on', 'off', 'cycle'] as const;
export type PowerAction = (typeof POWER_ACTIONS)[number];

/** The operation kind of each action (docs/power.md). */
export const POWER_KINDS = { on: 'power_on', off: 'power_off', cycle: 'power_cycle' } as const satisfies Record<PowerAction, string>;

/** pdudaemon's request for each action: a cycle is its `reboot` (off, `delay` seconds, on). */
const PDU_REQUEST = { on: 'on', off: 'off', cycle: 'reboot' } as const;

/** Above the pdudaemon command itself: its answer comes once the command ran. */
const RELAY_TIMEOUT_MS = 70_000;

export interface PowerKindDeps {
  db: Db;
  agents: Pick<BoardLinks, 'call'>;
  clock: Clock;
  /** MM_POWER_CYCLE_OFF_S: how long a cycle keeps the board off. */
  cycleOffS: number;
}

/**
 * `power_on`, `power_off`, `power_cycle`: server-side runs (Operations.runNow, so they do not
 * wait for the board, which may be off or hung) that ask the board's lab host to relay the
 * command to its pdudaemon (`power.control`). The board's power settings are read when the
 * run starts: no command goes out for a board without them.
 */
export function registerPowerKinds(kinds: OperationKindRegistry, deps: PowerKindDeps): void {
  for (const action of POWER_ACTIONS) {
    kinds.register(POWER_KINDS[action], {
      async run(op, h) {
        const target = await boardPowerOf(deps.db, h.boardId);
        const power = target?.power;
        if (!target || !power) {
          throw new OperationFailure('power_not_configured', `Board ${target?.name ?? h.boardId} has no power controller (set \`power\` with PATCH /api/boards/<id>/).`);
        }
        const controller = power.controller_board_id;
        const controllerName = (await boardNameOf(deps.db, controller)) ?? controller;
        const where = `pdudaemon PDU ${power.pdu_hostname} port ${power.pdu_port} through lab host ${controllerName}`;
        await h.log(`power ${action}: ${where}\n`, 'agent');
        await setPowerState(deps.db, h.boardId, undefined, new Date(deps.clock.now()));
        let answer: { status: number; body: string };
        try {
          answer = await deps.agents.call(
            controller,
            'power.control',
            {
              action: PDU_REQUEST[action],
              hostname: power.pdu_hostname,
              port: power.pdu_port,
              ...(action === 'cycle' ? { delay_s: deps.cycleOffS } : {}),
            },
            { timeoutMs: RELAY_TIMEOUT_MS + deps.cycleOffS * 1000, signal: h.signal },
          );
        } catch (err) {
          if (h.signal.aborted) throw err;
          if (err instanceof ApiError && (err.code === 'board_offline' || err.code === 'board_timeout')) {
            throw new OperationFailure(
              'power_controller_offline',
              `The lab host ${controllerName} ${err.code === 'board_offline' ? 'is offline' : 'did not answer in time'}: the power of ${target.name} cannot be switched now.`,
              { controller_board_id: controller },
            );
          }
          if (err instanceof ApiError) {
            // The agent's answer: not_lab_host, pdu_unreachable, pdu_error (pdudaemon's status and body).
            const message = err.message.replace(/^power\.control: /, '');
            throw new OperationFailure('pdu_error', `${where}: ${message} (${err.code})`, { controller_board_id: controller, pdu_answer: message });
          }
          throw err;
        }
        await setPowerState(deps.db, h.boardId, action === 'off' ? 'off' : 'on', new Date(deps.clock.now()));
        const said = answer.body.trim();
        await h.log(`pdudaemon answered ${answer.status}: ${said}\n`, 'agent');
        return { action, controller_board_id: controller, pdu_hostname: power.pdu_hostname, pdu_port: power.pdu_port, pdu_answer: said };
      },
    });
  }
}
