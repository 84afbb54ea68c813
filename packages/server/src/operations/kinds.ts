import type { RpcMethod, RpcParams, RpcResult } from '@mm/protocol';
import { ApiError } from '../errors.ts';
import type { OperationError, OperationObject, OperationProgress } from './operation-object.ts';

/**
 * Operation kinds that run on the server side while holding their board's queue slot.
 *
 * `transfer` and `execute` are built in (the agent runs them, see agent-operations.ts).
 * Every other kind (`pac_query`, `pac_activate`, `pac_install`) is registered in the
 * server's `OperationKindRegistry` by the module that owns it, when the composition root
 * (services.ts) builds the services:
 *
 *   kinds.register('pac_activate', {
 *     async run(op, h) {
 *       const pac = String(op.params.pac);                 // the params given to create()
 *       await h.call('pac.activate', { pac });             // an RPC over the board's link
 *       const { back } = h.expectReboot();                 // board shows `rebooting`, queue holds
 *       await h.call('board.reboot', {});
 *       await back;                                        // reconnected with a new boot id
 *       await h.log(`rebooted with ${pac}\n`);             // the operation's log
 *       const r = await h.call('pac.query', {});
 *       if (r.active !== pac) throw new OperationFailure('pac_not_active', `${pac} is not active`);
 *       return r;                                          // the operation's result
 *     },
 *   });
 *
 * then starts operations with `operations.create({ kind, boardId, params })` and answers
 * the POST with `respondWithOperation` (sync/async rules of docs/api.md).
 *
 * Contract of `run`:
 * - It starts once the board is online, not rebooting, and idle; no other operation of the
 *   board starts before it settles.
 * - Resolving ends the operation `succeeded` with the value as its `result`.
 * - Throwing ends it `failed`: an `OperationFailure` or an `ApiError` (e.g. the
 *   BadGatewayError/GatewayTimeoutError/ServiceUnavailableError of `h.call`) gives the error
 *   its `code` and message; anything else is `internal_error`.
 * - `h.signal` aborts when the operation is cancelled; the operation becomes `cancelled`
 *   when `run` settles after that (or after a grace period if it does not).
 * - If the server stops while `run` is running, the operation is found `running` at the next
 *   start: `onServerRestart` decides — `'fail'` (the default: `server_restarted`) or
 *   `'requeue'` (run again from the start; only for kinds that are safe to repeat).
 */
export interface OperationKind {
  run(op: OperationToRun, helpers: OperationHelpers): Promise<unknown>;
  onServerRestart?: 'fail' | 'requeue';
}

/** The operation as its run sees it: the API object plus the params it was created with. */
export type OperationToRun = OperationObject & { params: Record<string, unknown> };

export interface OperationHelpers {
  boardId: string;
  /** Aborted when the operation is cancelled (or the server shuts down). */
  signal: AbortSignal;
  /** `BoardLinks.call` on this operation's board, aborted with the operation. */
  call<M extends RpcMethod>(method: M, params: RpcParams<M>, opts?: { timeoutMs?: number }): Promise<RpcResult<M>>;
  /** Appends text to the operation's log (a `log` event); resolves once stored. */
  log(text: string, stream?: 'stdout' | 'stderr' | 'agent'): Promise<void>;
  /** Reports progress (stored at most a few times a second). */
  progress(progress: OperationProgress): void;
  /**
   * Marks the board `rebooting` (its queue holds until it is back) and resolves when it has
   * reconnected with another boot id; rejects with GatewayTimeoutError `reboot_timeout`
   * after `MM_REBOOT_TIMEOUT_S` (or `timeoutMs`). Call it before triggering the reboot.
   */
  expectReboot(opts?: { timeoutMs?: number }): { back: Promise<{ bootId: string }> };
}

/** A failure with a stable code (and optionally a partial result) for the operation's `error`. */
export class OperationFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly result: unknown = null,
  ) {
    super(message);
    this.name = 'OperationFailure';
  }
}

/** Maps whatever a run threw to the operation's error (and partial result). */
export function operationErrorOf(err: unknown): { error: OperationError; result: unknown } {
  if (err instanceof OperationFailure) return { error: { code: err.code, message: err.message }, result: err.result };
  if (err instanceof ApiError) return { error: { code: err.code, message: err.message }, result: null };
  return { error: { code: 'internal_error', message: err instanceof Error ? err.message : String(err) }, result: null };
}

/** Built-in kinds run by the agent itself. */
export const AGENT_KINDS = ['transfer', 'execute'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];
export const isAgentKind = (kind: string): kind is AgentKind => (AGENT_KINDS as readonly string[]).includes(kind);

/** The server-side operation kinds this server runs, by name. */
export class OperationKindRegistry {
  private readonly kinds = new Map<string, OperationKind>();

  /** Registers (or replaces) a server-side operation kind; see the comment above. */
  register(kind: string, definition: OperationKind): void {
    if (isAgentKind(kind)) throw new Error(`operation kind ${kind} is built in`);
    if (!/^[a-z][a-z0-9_]*$/.test(kind)) throw new Error(`operation kind ${JSON.stringify(kind)} must be snake_case`);
    this.kinds.set(kind, definition);
  }

  get(kind: string): OperationKind | undefined {
    return this.kinds.get(kind);
  }

  isKnown(kind: string): boolean {
    return isAgentKind(kind) || this.kinds.has(kind);
  }
}
