import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { safeString } from '../http/safe-string.ts';
import type { Context } from 'hono';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { requireInvocation } from '../services/invocations.ts';
import { notFound } from '../errors.ts';
import { emptyBodyIsNoBody } from '../http/empty-body.ts';
import { validationHook } from '../http/validation.ts';
import { boardForOperation } from '../operations/board-selection.ts';
import type { AgentKind } from '../operations/kinds.ts';
import { OperationSchema } from '../operations/operation-object.ts';
import { respondWithOperation } from '../operations/respond.ts';
import { InvocationIdParams } from '../http/openapi.ts';

const BoardChoice = z
  .object({
    board_id: z.string().uuid().optional().openapi({ description: 'The board; may be left out when exactly one is registered.' }),
  })
  .openapi('BoardChoice');

const preferHeader = z.object({
  prefer: safeString().optional().openapi({ description: '`respond-async` answers 202 at once; `wait=<s>` caps the wait', example: 'respond-async' }),
});

const responses = {
  200: { description: 'The operation succeeded', content: { 'application/json': { schema: OperationSchema } } },
  202: {
    description: 'Accepted (`Prefer: respond-async`, or still running after MM_SYNC_WAIT_S); `Location` names the operation',
    content: { 'application/json': { schema: OperationSchema } },
  },
  400: { description: 'Bad input, or `board_required` (several boards, none named)' },
  404: { description: '`invocation_not_found` or `board_not_found`' },
  409: { description: '`operation_cancelled` (the problem carries `operation`)' },
  502: { description: '`operation_failed`: the board ran it and it failed (the problem carries `operation`)' },
  503: { description: '`no_board` (none registered) or `board_offline` (not connected; nothing was started)' },
} as const;

const route = (kind: AgentKind, summary: string, description: string) =>
  createRoute({
    method: 'post',
    path: `/api/invocations/{id}/${kind}/`,
    tags: ['invocations', 'operations'],
    summary,
    description,
    middleware: [emptyBodyIsNoBody] as const,
    request: {
      params: InvocationIdParams,
      headers: preferHeader,
      body: { required: false, content: { 'application/json': { schema: BoardChoice } } },
    },
    responses,
  });

const transferRoute = route(
  'transfer',
  "Copy the invocation's files to the board",
  'Starts a `transfer` operation: the board receives every input file it does not already hold (same sha256), ' +
    'resuming partial files, and keeps them under `$MM_AGENT_DIR/invocations/<id>/`. Waits for the end unless `Prefer: respond-async`.',
);

const executeRoute = route(
  'execute',
  'Run the invocation on the board',
  'Starts an `execute` operation: transfers what the board lacks, runs the runner, and stores the output video as the ' +
    "invocation's `output_video`. No body needed. Waits for the end unless `Prefer: respond-async`.",
);

/** Transfer and execute (docs/api.md, "Transfer and execute"). */
export function invocationOperationRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.invocation) });

  const start = async (c: Context<AppEnv>, kind: AgentKind, invocationId: number, boardId: string | undefined) => {
    // Looked up together; an unknown invocation is reported before any board problem.
    const [invocation, board] = await Promise.allSettled([requireInvocation(ctx, invocationId), boardForOperation(ctx, boardId)]);
    if (invocation.status === 'rejected') throw invocation.reason;
    if (board.status === 'rejected') throw board.reason;
    const op = await ctx.operations.create({ kind, boardId: board.value, invocationId });
    return respondWithOperation(c, ctx, op);
  };

  app.openapi(transferRoute, (c) => start(c, 'transfer', c.req.valid('param').id, c.req.valid('json').board_id));
  app.openapi(executeRoute, (c) => start(c, 'execute', c.req.valid('param').id, c.req.valid('json').board_id));
  return app;
}
