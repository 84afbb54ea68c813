import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { problem } from '../auth/schemas.ts';
import { setAuditTarget } from '../auth/request-auth.ts';
import { notFound } from '../errors.ts';
import { validationHook } from '../http/validation.ts';
import { BoardSchema, toBoardObject } from '../agent-link/board-store.ts';
import { approveBoard } from '../enrollment/enroll.ts';

const approveRoute = createRoute({
  method: 'post',
  path: '/api/boards/{id}/approve/',
  tags: ['boards'],
  summary: 'Approve a pending board (enrolled with a manual key): its agent gets its token at its next try',
  request: { params: z.object({ id: z.string().uuid().openapi({ param: { name: 'id', in: 'path' } }) }) },
  responses: {
    200: { description: 'The board, no longer pending (approving a registered board changes nothing)', content: { 'application/json': { schema: BoardSchema } } },
    404: problem('`board_not_found`'),
  },
});

/** `POST /api/boards/<id>/approve/` (admin; docs/enrollment.md). */
export function boardApprovalRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.board) });
  const { db } = ctx.database;

  app.openapi(approveRoute, async (c) => {
    const { id } = c.req.valid('param');
    const approved = await approveBoard(db, id);
    if (!approved) throw notFound.board(id);
    setAuditTarget(`board ${id}`, { name: approved.board.name, was_pending: approved.wasPending });
    if (approved.wasPending) ctx.log.info({ board_id: id }, 'board approved');
    const busy = await ctx.operations.busyBoards([id]);
    return c.json(toBoardObject(approved.board, ctx.agents.presence(id), busy.has(id)), 200);
  });

  return app;
}
