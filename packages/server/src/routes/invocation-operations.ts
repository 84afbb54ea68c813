import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { safeString } from '../http/safe-string.ts';
import type { Context } from 'hono';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { requireInvocation } from '../invocations/invocations.ts';
import { BadRequestError, notFound } from '../errors.ts';
import { BoardSelectorSchema } from '../boards/board-selector.ts';
import { emptyBodyIsNoBody } from '../http/empty-body.ts';
import { validationHook } from '../http/validation.ts';
import { boardForOperation } from '../operations/board-selection.ts';
import type { AgentKind } from '../operations/kinds.ts';
import { OperationSchema } from '../operations/operation-object.ts';
import { respondWithOperation } from '../operations/respond.ts';
import { SerialIdParams } from '../http/params.ts';

const BoardChoice = z
  .object({
    board_id: z.string().uuid().optional().openapi({ description: 'The board; may be left out when exactly one is registered.' }),
  })
  .openapi('BoardChoice');

const ExecuteBody = BoardChoice.extend({
  board_selector: BoardSelectorSchema.optional().openapi({
    description: 'Run on any board whose labels hold every pair (instead of board_id): the first matching board online, not in maintenance, not bad, idle (longest idle first)',
  }),
  priority: z.number().int().min(-100).max(100).optional().openapi({ description: 'Waiting selector work is taken by priority (−100…100, default 0), then age' }),
  queue_timeout_s: z
    .number()
    .int()
    .min(1)
    .max(365 * 86_400)
    .optional()
    .openapi({ description: 'Fail with `queue_timeout` if it has not started after this many seconds (default MM_QUEUE_TIMEOUT_S)' }),
  repeat: z.number().int().min(1).max(100).optional().openapi({
    description: 'Run the runner this many times (1–100, default 1): `result.runs` holds each run\'s metrics, `result.summary` per metric `{ n, median, q1, q3, ci95 }` (docs/results.md)',
  }),
  warmup: z.number().int().min(0).max(20).optional().openapi({ description: 'Runs before the counted ones, not counted (0–20, default 0)' }),
}).openapi('ExecuteRequest');

const preferHeader = z.object({
  prefer: safeString().optional().openapi({ description: '`respond-async` answers 202 at once; `wait=<s>` caps the wait', example: 'respond-async' }),
});

const responses = {
  200: { description: 'The operation succeeded', content: { 'application/json': { schema: OperationSchema } } },
  202: {
    description: 'Accepted (`Prefer: respond-async`, or still running after MM_SYNC_WAIT_S); `Location` names the operation',
    content: { 'application/json': { schema: OperationSchema } },
  },
  400: {
    description:
      'Bad input, `board_required` (several boards, none named), `board_choice_conflict` (both board_id and board_selector), `no_matching_board` (no registered board matches the selector; nothing was created)',
  },
  404: { description: '`invocation_not_found` or `board_not_found`' },
  409: {
    description:
      '`operation_cancelled` (the problem carries `operation`), or `dpu_fingerprint_mismatch`: the weights are an xmodel compiled for ' +
      'another DPU than the named board\'s (`model_fingerprints`, `board_fingerprint`, `fitting_boards`); nothing was created',
  },
  502: { description: '`operation_failed`: the board ran it and it failed (the problem carries `operation`)' },
  503: { description: '`no_board` (none registered) or `board_offline` (not connected; nothing was started)' },
} as const;

const route = <B extends typeof BoardChoice>(kind: AgentKind, summary: string, description: string, body: B) =>
  createRoute({
    method: 'post',
    path: `/api/invocations/{id}/${kind}/`,
    tags: ['invocations', 'operations'],
    summary,
    description,
    middleware: [emptyBodyIsNoBody] as const,
    request: {
      params: SerialIdParams,
      headers: preferHeader,
      body: { required: false, content: { 'application/json': { schema: body } } },
    },
    responses,
  });

const transferRoute = route(
  'transfer',
  "Copy the invocation's files to the board",
  'Starts a `transfer` operation: the board receives every input file it does not already hold (same sha256), ' +
    'resuming partial files, and keeps them under `$MM_AGENT_DIR/invocations/<id>/`. Waits for the end unless `Prefer: respond-async`.',
  BoardChoice,
);

const executeRoute = route(
  'execute',
  'Run the invocation on the board',
  'Starts an `execute` operation: transfers what the board lacks, runs the runner, and stores the output video as the ' +
    "invocation's `output_video`. No body needed. Waits for the end unless `Prefer: respond-async`. With `board_selector` " +
    'the operation waits (queued, `board_id` null) until the fleet scheduler picks a matching board (docs/fleet.md).',
  ExecuteBody,
);

/** Transfer and execute (docs/api.md, "Transfer and execute"). */
export function invocationOperationRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.invocation) });

  const start = async (
    c: Context<AppEnv>,
    kind: AgentKind,
    invocationId: number,
    boardId: string | undefined,
    fleet: { priority?: number; queueTimeoutMs?: number; params?: Record<string, unknown> } = {},
  ) => {
    // Looked up together; an unknown invocation is reported before any board problem.
    const [invocation, board] = await Promise.allSettled([requireInvocation(ctx, invocationId), boardForOperation(ctx, boardId)]);
    if (invocation.status === 'rejected') throw invocation.reason;
    if (board.status === 'rejected') throw board.reason;
    // A model compiled for another DPU: 409 dpu_fingerprint_mismatch before anything is created (docs/accelerators.md).
    if (kind === 'execute') await ctx.accelerators.checkNamedBoard(invocationId, board.value);
    const op = await ctx.operations.create({ kind, boardId: board.value, invocationId, ...fleet });
    return respondWithOperation(c, ctx, op);
  };

  app.openapi(transferRoute, (c) => start(c, 'transfer', c.req.valid('param').id, c.req.valid('json').board_id));
  app.openapi(executeRoute, async (c) => {
    const invocationId = c.req.valid('param').id;
    const body = c.req.valid('json');
    if (body.board_selector !== undefined && body.board_id !== undefined) {
      throw new BadRequestError('board_choice_conflict', 'Name a board (board_id) or describe one (board_selector), not both.');
    }
    // Repeated runs of one operation (docs/results.md): the agent runs warmup + repeat times.
    const params = { ...(body.repeat !== undefined && body.repeat !== 1 ? { repeat: body.repeat } : {}), ...(body.warmup ? { warmup: body.warmup } : {}) };
    const fleet = { priority: body.priority ?? 0, queueTimeoutMs: body.queue_timeout_s !== undefined ? body.queue_timeout_s * 1000 : ctx.config.queueTimeoutMs, params };
    if (body.board_selector === undefined) return start(c, 'execute', invocationId, body.board_id, fleet);
    const selector = body.board_selector;
    await requireInvocation(ctx, invocationId);
    if (!(await ctx.scheduler.anyBoardMatches(selector))) {
      throw new BadRequestError('no_matching_board', `No registered board has the labels ${Object.entries(selector).map(([k, v]) => `${k}=${v}`).join(', ')}.`);
    }
    // Only boards the model fits (or of unknown fingerprint) may take it: none → no_matching_board, reason dpu_fingerprint.
    await ctx.accelerators.checkSelector(invocationId, selector);
    // Operations tells the fleet scheduler of the new work.
    const op = await ctx.operations.create({ kind: 'execute', boardId: null, invocationId, boardSelector: selector, ...fleet });
    return respondWithOperation(c, ctx, op);
  });
  return app;
}
