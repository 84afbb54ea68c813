import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { setAuditTarget } from '../auth/request-auth.ts';
import { NotFoundError, notFound } from '../errors.ts';
import { emptyBodyIsNoBody } from '../http/empty-body.ts';
import { validationHook } from '../http/validation.ts';
import { IdParams } from '../http/params.ts';
import { DownloadsFolder } from '../downloads/downloads-folder.ts';
import { OperationSchema } from '../operations/operation-object.ts';
import { respondWithOperation } from '../operations/respond.ts';

const Body = z
  .object({ version: z.string().min(1).max(64).optional().openapi({ description: 'Default: the newest version the control plane serves' }) })
  .strict()
  .openapi('AgentUpdate', { example: { version: '0.2.0' } });

const updateRoute = createRoute({
  method: 'post',
  path: '/api/boards/{id}/agent-update/',
  tags: ['boards'],
  summary: "Update the board's agent: after its running operation, installed beside, switched, rolled back by the board itself if it does not come up",
  middleware: [emptyBodyIsNoBody] as const,
  request: {
    params: IdParams,
    body: { required: false, content: { 'application/json': { schema: Body } } },
  },
  responses: {
    200: { description: 'The operation, succeeded: the board reconnected with the new version', content: { 'application/json': { schema: OperationSchema } } },
    202: { description: 'The operation (Prefer: respond-async, or still running after MM_SYNC_WAIT_S)' },
    404: { description: '`board_not_found`; `agent_version_not_found`: the control plane serves no agent package of that version' },
    409: { description: 'The operation was cancelled' },
    502: { description: 'The update failed (`update_rolled_back`, `agent_package_not_found`, `checksum_mismatch`, ...); the problem carries the operation' },
    503: { description: '`board_offline`' },
  },
});

/** `POST /api/boards/<id>/agent-update/` (admin; docs/packages.md). */
export function agentUpdateRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.board) });
  const folder = new DownloadsFolder(ctx.config.packagesDir);

  app.openapi(updateRoute, async (c) => {
    const { id } = c.req.valid('param');
    await ctx.boards.require(id);
    const body = c.req.valid('json');
    const files = await folder.list();
    const served = [...new Set(files.filter((f) => f.kind === 'agent_package').map((f) => f.version!))];
    const version = body.version ?? served[0];
    if (!version || !served.includes(version)) {
      const held = served.length > 0 ? `it serves ${served.join(', ')}` : `it serves none: build them with \`npx -y pnpm@10 run package:agent\` into ${folder.dir} (MM_PACKAGES_DIR)`;
      throw new NotFoundError('agent_version_not_found', `The control plane holds no agent package of version ${version ?? '(any)'}: ${held}.`);
    }
    setAuditTarget(`board ${id}`, { version });
    const op = await ctx.operations.create({ kind: 'agent_update', boardId: id, params: { version } });
    return respondWithOperation(c, ctx, op, { successStatus: 200 });
  });

  return app;
}
