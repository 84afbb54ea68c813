import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { BoardSchema } from '../boards/board-store.ts';
import { BoardSelectorSchema } from '../boards/board-selector.ts';
import { labelKeyProblem, LabelsSchema, MAX_LABELS } from '../boards/label-schema.ts';
import { notFound } from '../errors.ts';
import { requireJson } from '../http/openapi.ts';
import { validationHook } from '../http/validation.ts';
import { setAuditTarget } from '../auth/request-auth.ts';

const RemoveKeys = z
  .array(z.string())
  .max(MAX_LABELS)
  .superRefine((keys, ctx) => {
    for (const [i, key] of keys.entries()) {
      const problem = labelKeyProblem(key, false);
      if (problem) ctx.addIssue({ code: 'custom', path: [i], message: problem });
    }
  });

const BulkLabelsBody = z
  .object({
    board_ids: z.array(z.string().uuid()).min(1).max(10_000).optional().openapi({ description: 'These boards' }),
    board_selector: BoardSelectorSchema.optional().openapi({ description: 'Every board holding these labels (`{}`: every board)' }),
    set: LabelsSchema.optional().openapi({ description: 'Labels to set (a key it has already takes the new value)' }),
    remove: RemoveKeys.optional().openapi({ description: 'Label keys to remove (a board without one is left as it is)' }),
  })
  .strict()
  .superRefine((b, ctx) => {
    if ((b.board_ids === undefined) === (b.board_selector === undefined)) ctx.addIssue({ code: 'custom', path: ['board_ids'], message: 'give board_ids or board_selector, one of them' });
    if (!b.set && !b.remove) ctx.addIssue({ code: 'custom', path: ['set'], message: 'give set, remove or both' });
    const both = (b.remove ?? []).filter((k) => b.set && Object.hasOwn(b.set, k));
    if (both.length) ctx.addIssue({ code: 'custom', path: ['remove'], message: `${both.join(', ')}: both set and removed` });
  })
  .openapi('BulkLabels', { example: { board_selector: { site: 'lab-1' }, set: { rack: 'b' }, remove: ['temp'] } });

const bulkLabelsRoute = createRoute({
  method: 'post',
  path: '/api/boards/labels/',
  tags: ['boards', 'fleet'],
  summary: 'Set and remove labels on many boards at once (by ids or by a selector)',
  description:
    "Removes the `remove` keys and sets the `set` pairs on every board named in `board_ids` (unknown ids are skipped) or matched by `board_selector`, in one transaction. The agent's `mm/` labels cannot be set or removed. A board that would end with more than 32 labels makes it a 400 and nothing changes.",
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: BulkLabelsBody } } } },
  responses: {
    200: {
      description: 'The boards changed (oldest first) and how many',
      content: { 'application/json': { schema: z.object({ boards: z.array(BoardSchema), changed: z.number().int() }).openapi('BulkLabelsResult') } },
    },
    400: { description: 'Bad input (`validation_failed`)' },
    415: { description: 'The body is not application/json' },
  },
});

/** `POST /api/boards/labels/` (admin; docs/fleet.md, "Labels"). */
export function boardLabelRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.board) });

  app.openapi(bulkLabelsRoute, async (c) => {
    const body = c.req.valid('json');
    const change = { set: { ...(body.set ?? {}) }, remove: body.remove ?? [] };
    const target = body.board_ids ? { ids: body.board_ids } : { selector: { ...(body.board_selector ?? {}) } };
    const boards = await ctx.boards.relabel(target, change);
    setAuditTarget(`${boards.length} boards`, { ...('ids' in target ? { board_ids: target.ids } : { board_selector: target.selector }), ...change, changed: boards.map((b) => b.id) });
    return c.json({ boards, changed: boards.length }, 200);
  });

  return app;
}
