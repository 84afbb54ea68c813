import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { problem } from '../auth/schemas.ts';
import { setAuditTarget } from '../auth/request-auth.ts';
import { notFound } from '../errors.ts';
import { validationHook } from '../http/validation.ts';
import { IdParams } from '../http/params.ts';
import { BoardSchema } from '../boards/board-store.ts';

const approveRoute = createRoute({
  method: 'post',
  path: '/api/boards/{id}/approve/',
  tags: ['boards'],
  summary: 'Approve a pending board (enrolled with a manual key), or its held re-enrolment: its agent gets a token at its next try',
  request: { params: IdParams },
  responses: {
    200: { description: 'The board, no longer pending; a held re-enrolment (`reenroll_request`) is approved (approving a registered board with none changes nothing)', content: { 'application/json': { schema: BoardSchema } } },
    404: problem('`board_not_found`'),
  },
});

/** `POST /api/boards/<id>/approve/` (admin; docs/enrollment.md). */
export function boardApprovalRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.board) });

  app.openapi(approveRoute, async (c) => {
    const { id } = c.req.valid('param');
    const approved = await ctx.provisioningKeys.approve(id);
    setAuditTarget(`board ${id}`, { name: approved.board.name, was_pending: approved.wasPending, ...(approved.reenroll ? { reenroll: approved.reenroll } : {}) });
    return c.json(await ctx.boards.showOne(approved.board), 200);
  });

  return app;
}
