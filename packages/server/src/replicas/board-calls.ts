import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import type { Db } from '../db/database.ts';
import { boardCalls } from '../db/schema.ts';
import { ApiError, BadGatewayError, GatewayTimeoutError, ServiceUnavailableError } from '../errors.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';

/** What a replica holding a board's link offers for calls from other replicas. */
export interface LocalBoardCaller {
  /** The board's link lives here. */
  isLocal(boardId: string): boolean;
  /** Runs the RPC on the local link (checked against its schema there). */
  callLocal(boardId: string, method: string, params: unknown, timeoutMs: number): Promise<unknown>;
}

/** Runs a call of one method on the link here: its result (JSON) and, for proxied requests, a body. */
export type LocalCallHandler = (boardId: string, params: unknown, body: Uint8Array | null, timeoutMs: number) => Promise<{ result: unknown; body?: Uint8Array }>;

/** Bodies carried through the table (a proxied request's and its answer's). */
export const MAX_CALL_BODY_BYTES = 1024 * 1024;

/** The asker waits this much longer than the call's own timeout (the holder answers 504 itself first). */
const ANSWER_MARGIN_MS = 3000;

/**
 * Agent RPCs for a board whose link lives on another replica, through `board_calls`: the
 * asker stores the request and notifies (`board.call`); the replica holding the link takes
 * the row (only one does), runs the call on its link, stores the result or the error and
 * notifies back (`board.call.answer`); the asker reads the answer and deletes the row.
 * Errors keep their status and code (503 `board_offline`, 504 `board_timeout`, 502 …).
 * Rows left by a dead replica expire and are removed by the session heartbeat.
 */
export class BoardCalls {
  private readonly waiting = new Map<number, () => void>();
  private readonly handlers = new Map<string, LocalCallHandler>();

  constructor(
    private readonly deps: { db: Db; bus: EventBus; replicaId: string; log: Logger; links: LocalBoardCaller; clock?: Clock },
  ) {
    deps.bus.subscribe('board.call', undefined, ({ callId, boardId }) => {
      if (deps.links.isLocal(boardId)) void this.run(callId);
    });
    deps.bus.subscribe('board.call.answer', undefined, ({ callId }) => this.waiting.get(callId)?.());
  }

  /** Calls of `method` are run by `handler` on the replica holding the link (e.g. the device-script proxy). */
  serve(method: string, handler: LocalCallHandler): void {
    this.handlers.set(method, handler);
  }

  /** An agent RPC on the board's link elsewhere: its result. */
  async call(boardId: string, method: string, params: unknown, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    return (await this.ask(boardId, method, params, null, timeoutMs, signal)).result;
  }

  /** A call with a body both ways (the device-script proxy): the result and the answer's body. */
  async request(
    boardId: string,
    method: string,
    params: unknown,
    body: Uint8Array | null,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<{ result: unknown; body: Uint8Array | null }> {
    return this.ask(boardId, method, params, body, timeoutMs, signal);
  }

  private async ask(
    boardId: string,
    method: string,
    params: unknown,
    body: Uint8Array | null,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<{ result: unknown; body: Uint8Array | null }> {
    const { db } = this.deps;
    signal?.throwIfAborted();
    const [row] = await db
      .insert(boardCalls)
      .values({
        boardId,
        originReplica: this.deps.replicaId,
        method,
        params: params ?? {},
        requestBody: body,
        timeoutMs,
        expiresAt: sql`now() + ${Math.round(timeoutMs + 2 * ANSWER_MARGIN_MS)}::int * interval '1 millisecond'`,
      })
      .returning({ id: boardCalls.id });
    const id = row!.id;
    const clock = this.deps.clock ?? systemClock;
    let timer: TimerHandle | undefined;
    let onAbort: (() => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        this.waiting.set(id, resolve);
        timer = clock.setTimeout(resolve, timeoutMs + ANSWER_MARGIN_MS);
        if (signal) {
          onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
          signal.addEventListener('abort', onAbort, { once: true });
        }
        this.deps.bus.publish('board.call', boardId, { callId: id, boardId });
      });
      const [answer] = await db.select().from(boardCalls).where(eq(boardCalls.id, id));
      if (!answer?.answeredAt) {
        throw new GatewayTimeoutError('board_timeout', `The board did not answer ${method} within ${Math.round(timeoutMs / 1000)} s.`);
      }
      if (answer.error) throw errorOf(answer.error);
      return { result: answer.result, body: answer.responseBody ?? null };
    } finally {
      this.waiting.delete(id);
      clock.clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      db.delete(boardCalls)
        .where(eq(boardCalls.id, id))
        .catch((err: unknown) => this.deps.log.warn({ err, call_id: id }, 'could not remove a board call'));
    }
  }

  /** Takes the call if nobody did yet, runs it on the local link, stores the answer and says so. */
  private async run(callId: number): Promise<void> {
    const { db, links, log } = this.deps;
    try {
      const [row] = await db
        .update(boardCalls)
        .set({ claimedBy: this.deps.replicaId })
        .where(and(eq(boardCalls.id, callId), isNull(boardCalls.claimedBy)))
        .returning();
      if (!row) return;
      let result: unknown = null;
      let responseBody: Uint8Array | null = null;
      let error: { status: number; code: string; message: string } | null = null;
      try {
        const handler = this.handlers.get(row.method);
        if (handler) {
          const answer = await handler(row.boardId, row.params, row.requestBody ?? null, row.timeoutMs);
          result = answer.result ?? null;
          responseBody = answer.body ?? null;
        } else {
          result = (await links.callLocal(row.boardId, row.method, row.params, row.timeoutMs)) ?? null;
        }
      } catch (err) {
        error =
          err instanceof ApiError
            ? { status: err.status, code: err.code, message: err.message }
            : { status: 502, code: 'board_error', message: err instanceof Error ? err.message : String(err) };
      }
      await db.update(boardCalls).set({ answeredAt: sql`now()`, result, error, responseBody }).where(eq(boardCalls.id, callId));
      this.deps.bus.publish('board.call.answer', callId, { callId });
    } catch (err) {
      log.warn({ err, call_id: callId }, 'could not serve a board call from another replica');
    }
  }

  /** After missed notifications: serve calls waiting for boards linked here; wake askers whose answer is in. */
  async resync(): Promise<void> {
    const { db, links } = this.deps;
    const open = await db
      .select({ id: boardCalls.id, boardId: boardCalls.boardId, answeredAt: boardCalls.answeredAt, originReplica: boardCalls.originReplica })
      .from(boardCalls)
      .where(gt(boardCalls.expiresAt, sql`now()`));
    for (const c of open) {
      if (c.answeredAt && c.originReplica === this.deps.replicaId) this.waiting.get(c.id)?.();
      else if (!c.answeredAt && links.isLocal(c.boardId)) void this.run(c.id);
    }
  }
}

function errorOf(e: { status: number; code: string; message: string }): ApiError {
  if (e.status === 503) return new ServiceUnavailableError(e.code, e.message);
  if (e.status === 504) return new GatewayTimeoutError(e.code, e.message);
  if (e.status === 502) return new BadGatewayError(e.code, e.message);
  return new ApiError(e.status, e.code, 'Error', e.message);
}
