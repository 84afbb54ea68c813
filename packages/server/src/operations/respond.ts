import type { Context } from 'hono';
import type { Config } from '../config.ts';
import type { Operations } from './operations.ts';
import { ApiError, BadGatewayError, ConflictError } from '../errors.ts';
import type { OperationObject } from './operation-object.ts';

/** RFC 7240 `Prefer`: `respond-async`, and `wait=<seconds>` (caps how long a POST waits). */
export function parsePrefer(header: string | undefined): { respondAsync: boolean; waitMs: number | undefined } {
  let respondAsync = false;
  let waitMs: number | undefined;
  for (const part of (header ?? '').split(',')) {
    const [name, value] = part.split(';')[0]!.trim().split('=').map((s) => s.trim().toLowerCase());
    if (name === 'respond-async') respondAsync = true;
    else if (name === 'wait' && value && /^\d+(\.\d+)?$/.test(value)) waitMs = Math.round(Number(value) * 1000);
  }
  return { respondAsync, waitMs };
}

export function operationLocation(id: number): string {
  return `/api/operations/${id}/`;
}

export interface OperationAnswerOptions {
  /** The status of the success answer (default 200). */
  successStatus?: 200 | 201;
  /** The body of the success answer (default: the operation itself), e.g. its `result`. */
  body?: (op: OperationObject) => unknown;
  /**
   * Failure codes that mean the request itself was wrong (an unknown PAC, a refused
   * archive): answered 400 with that code rather than 502 `operation_failed`.
   */
  badRequestCodes?: readonly string[];
}

/**
 * Answers a POST that started an operation, by the contract's rules (docs/api.md):
 * with `Prefer: respond-async` at once 202 + `Location`; otherwise it waits for the end
 * (at most `MM_SYNC_WAIT_S`, or the `Prefer: wait=` seconds if shorter) and answers
 * 200 succeeded (or `successStatus`; the operation, or `body(op)`), 502 `operation_failed`
 * (400 with the failure's code when it is one of `badRequestCodes`) / 409
 * `operation_cancelled` with the operation in the problem body, or 202 + `Location` if it
 * is still going. A client that goes away does not stop the operation.
 */
export async function respondWithOperation(
  c: Context,
  ctx: { config: Pick<Config, 'syncWaitMs'>; operations: Pick<Operations, 'waitForEnd' | 'get'> },
  op: OperationObject,
  opts: OperationAnswerOptions = {},
): Promise<Response> {
  const prefer = parsePrefer(c.req.header('prefer'));
  const accepted = (current: OperationObject) => {
    c.header('Location', operationLocation(current.id));
    if (prefer.respondAsync) c.header('Preference-Applied', 'respond-async');
    return c.json(current, 202);
  };
  if (prefer.respondAsync) return accepted(op);
  const waitMs = Math.min(ctx.config.syncWaitMs, prefer.waitMs ?? Number.POSITIVE_INFINITY);
  const ended = await ctx.operations.waitForEnd(op.id, waitMs, c.req.raw.signal);
  if (!ended) return accepted((await ctx.operations.get(op.id)) ?? op);
  return finalResponse(c, ended, opts);
}

function finalResponse(c: Context, op: OperationObject, opts: OperationAnswerOptions): Response {
  if (op.status === 'succeeded') return c.json(opts.body ? opts.body(op) : op, opts.successStatus ?? 200);
  if (op.status === 'cancelled') {
    throw new ConflictError('operation_cancelled', `Operation ${op.id} was cancelled.`, { operation: op });
  }
  const error = op.error;
  if (error && opts.badRequestCodes?.includes(error.code)) {
    throw new ApiError(400, error.code, 'Bad Request', error.message, undefined, { operation: op });
  }
  const why = error ? `${error.code}: ${error.message}` : 'no reason given';
  throw new BadGatewayError('operation_failed', `Operation ${op.id} failed on the board (${why}).`, { operation: op });
}
