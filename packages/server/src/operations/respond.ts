import type { Context } from 'hono';
import type { AppContext } from '../app-context.ts';
import { BadGatewayError, ConflictError } from '../errors.ts';
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

/**
 * Answers a POST that started an operation, by the contract's rules (API.md):
 * with `Prefer: respond-async` at once 202 + `Location`; otherwise it waits for the end
 * (at most `MM_SYNC_WAIT_S`, or the `Prefer: wait=` seconds if shorter) and answers
 * 200 succeeded (or `successStatus`), 502 `operation_failed` / 409 `operation_cancelled`
 * with the operation in the problem body, or 202 + `Location` if it is still going.
 * A client that goes away does not stop the operation.
 */
export async function respondWithOperation(
  c: Context,
  ctx: AppContext,
  op: OperationObject,
  opts: { successStatus?: 200 | 201 } = {},
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
  return finalResponse(c, ended, opts.successStatus ?? 200);
}

function finalResponse(c: Context, op: OperationObject, successStatus: 200 | 201): Response {
  if (op.status === 'succeeded') return c.json(op, successStatus);
  if (op.status === 'cancelled') {
    throw new ConflictError('operation_cancelled', `Operation ${op.id} was cancelled.`, { operation: op });
  }
  const why = op.error ? `${op.error.code}: ${op.error.message}` : 'no reason given';
  throw new BadGatewayError('operation_failed', `Operation ${op.id} failed on the board (${why}).`, { operation: op });
}
