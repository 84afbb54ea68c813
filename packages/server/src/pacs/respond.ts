import type { Context } from 'hono';
import type { AppContext } from '../app-context.ts';
import { ApiError, BadGatewayError, ConflictError } from '../errors.ts';
import type { OperationObject } from '../operations/operation-object.ts';
import { operationLocation, parsePrefer } from '../operations/respond.ts';

export interface PacAnswerOptions {
  successStatus: 200 | 201;
  /** The body of the success answer (default: the operation itself). */
  body?: (op: OperationObject) => unknown;
  /**
   * Failure codes that mean the request itself was wrong (an unknown PAC, a refused
   * archive): answered 400 with that code rather than 502 `operation_failed`.
   */
  badRequestCodes?: readonly string[];
}

/**
 * Answers a PAC POST by the sync/async rules of API.md, like `respondWithOperation`, with
 * two differences: the success body may be the operation's result (rows 10 and 12 answer
 * `{ board_id, pacs, … }`, not the operation), and failures caused by the request itself
 * are 400s. Every non-success answer carries the operation (`operation` in the problem).
 */
export async function respondWithPacOperation(c: Context, ctx: AppContext, op: OperationObject, opts: PacAnswerOptions): Promise<Response> {
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

  if (ended.status === 'succeeded') return c.json(opts.body ? opts.body(ended) : ended, opts.successStatus);
  if (ended.status === 'cancelled') {
    throw new ConflictError('operation_cancelled', `Operation ${ended.id} was cancelled.`, { operation: ended });
  }
  const error = ended.error;
  if (error && opts.badRequestCodes?.includes(error.code)) {
    throw new ApiError(400, error.code, 'Bad Request', error.message, undefined, { operation: ended });
  }
  const why = error ? `${error.code}: ${error.message}` : 'no reason given';
  throw new BadGatewayError('operation_failed', `Operation ${ended.id} failed on the board (${why}).`, { operation: ended });
}
