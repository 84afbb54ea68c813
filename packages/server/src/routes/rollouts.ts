import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { setAuditTarget } from '../auth/request-auth.ts';
import { safeString } from '../http/safe-string.ts';
import { PageQuery, SerialIdParams, uuidParam } from '../http/params.ts';
import { requireJson } from '../http/openapi.ts';
import { validationHook } from '../http/validation.ts';
import { ROLLOUT_STATUSES, RolloutCreateSchema, RolloutListSchema, RolloutSchema } from '../rollouts/rollout-object.ts';
import { rolloutNotFound } from '../rollouts/rollouts.ts';
import { serveFile } from '../http/file-response.ts';
import { contentSource } from '../invocations/invocation-files.ts';

const ListQuery = z.object({
  status: z.enum(ROLLOUT_STATUSES).optional(),
  kind: safeString().min(1).max(100).optional().openapi({ example: 'pac_activate' }),
  ...PageQuery.shape,
});

const notFoundResponse = { description: 'No such rollout (problem+json, `rollout_not_found`)' } as const;

const createRoute_ = createRoute({
  method: 'post',
  path: '/api/rollouts/',
  tags: ['rollouts'],
  summary: 'Apply one operation kind to every board a selector matches, in phases, with an automatic abort',
  description:
    'The matching boards are fixed now. Each board\'s step is an ordinary operation named to that board. Without `batch_size` ' +
    'every board starts at once; with it, in phases of that size, the next when the previous has ended and `batch_interval_s` ' +
    'passed. With `abort`, once `min_finished` boards have finished and the failed share reaches `failure_percent`, the rollout ' +
    'is `aborted`: boards not started are `skipped`, running ones finish. `execute` needs the operator role, the other kinds admin.',
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: RolloutCreateSchema } } } },
  responses: {
    201: { description: 'The rollout, its first phase started', content: { 'application/json': { schema: RolloutSchema } } },
    400: { description: '`validation_failed`, `no_matching_board`, `kind_not_supported` (`script_deploy` on a control plane without it)' },
    403: { description: 'A kind other than `execute` needs the admin role' },
    404: { description: '`invocation_not_found`, `content_not_found` (`pac_install`: the archive is not stored), `agent_version_not_found`' },
    415: { description: 'The body is not application/json' },
  },
});

const listRoute = createRoute({
  method: 'get',
  path: '/api/rollouts/',
  tags: ['rollouts'],
  summary: 'List rollouts, newest first',
  request: { query: ListQuery },
  responses: {
    200: { description: 'A page of rollouts and the number of all matches', content: { 'application/json': { schema: RolloutListSchema } } },
    400: { description: 'Bad filter (`validation_failed`)' },
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/api/rollouts/{id}/',
  tags: ['rollouts'],
  summary: 'A rollout: its status, counts and every board with its step',
  request: { params: SerialIdParams },
  responses: { 200: { description: 'The rollout', content: { 'application/json': { schema: RolloutSchema } } }, 404: notFoundResponse },
});

const command = (name: 'pause' | 'resume' | 'cancel', summary: string, conflict: string) =>
  createRoute({
    method: 'post',
    path: `/api/rollouts/{id}/${name}/`,
    tags: ['rollouts'],
    summary,
    request: { params: SerialIdParams },
    responses: {
      202: { description: 'The rollout as it is now', content: { 'application/json': { schema: RolloutSchema } } },
      404: notFoundResponse,
      409: { description: conflict },
    },
  });

const pauseRoute = command('pause', 'Pause: the next phase waits (steps already started go on)', '`rollout_not_running` or `rollout_finished`');
const resumeRoute = command('resume', 'Resume a paused rollout', '`rollout_not_paused` or `rollout_finished`');
const cancelRoute = command('cancel', 'Cancel: boards not started are skipped, queued steps cancelled; running ones finish', '`rollout_finished`');

const outputRoute = createRoute({
  method: 'get',
  path: '/api/rollouts/{id}/boards/{board_id}/output/',
  tags: ['rollouts'],
  summary: "One board's output video of an execute rollout (Range honoured)",
  request: { params: SerialIdParams.extend({ board_id: uuidParam('board_id') }) },
  responses: {
    200: { description: 'The video', content: { 'video/mp4': { schema: z.string().openapi({ format: 'binary' }) } } },
    206: { description: 'A range of it' },
    404: { description: '`rollout_not_found`, `board_not_in_rollout`, `output_not_found`' },
  },
});

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
  'transfer-encoding': 'chunked',
};

/** Rollouts (docs/rollouts.md). */
export function rolloutRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(rolloutNotFound) });

  app.openapi(createRoute_, async (c) => {
    const rollout = await ctx.rollouts.create(c.req.valid('json'));
    setAuditTarget(`rollout ${rollout.id}`, { kind: rollout.kind, boards: rollout.boards.length });
    return c.json(rollout, 201, { location: `/api/rollouts/${rollout.id}/` });
  });

  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    return c.json(await ctx.rollouts.list({ status: q.status, kind: q.kind }, { limit: q.limit, offset: q.offset }), 200);
  });

  app.openapi(getRoute, async (c) => c.json(await ctx.rollouts.require(c.req.valid('param').id), 200));

  app.openapi(pauseRoute, async (c) => c.json(await ctx.rollouts.pause(c.req.valid('param').id), 202));
  app.openapi(resumeRoute, async (c) => c.json(await ctx.rollouts.resume(c.req.valid('param').id), 202));
  app.openapi(cancelRoute, async (c) => c.json(await ctx.rollouts.cancel(c.req.valid('param').id), 202));

  app.openapi(outputRoute, async (c) => {
    const { id, board_id } = c.req.valid('param');
    const video = await ctx.rollouts.outputOf(id, board_id);
    return serveFile(c, {
      size: video.size,
      etag: `"${video.sha256}"`,
      lastModified: video.at,
      contentType: video.contentType,
      disposition: { type: 'attachment', filename: video.filename },
      ...contentSource(ctx, video.sha256),
    }) as never;
  });

  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/api/rollouts/{id}/events/',
    tags: ['rollouts'],
    summary: "The rollout's events (server-sent events)",
    description:
      'First a `status` event with the whole rollout; then `board` (one board\'s step changed: the board and `counts`), ' +
      '`status` (the rollout\'s status changed: the whole rollout) and, once it has finished, `end` (the final rollout) and the ' +
      'stream closes. A reconnecting client starts again from the whole rollout.',
    request: { params: SerialIdParams },
    responses: {
      200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: z.string() } } },
      404: notFoundResponse,
    },
  });

  app.get('/api/rollouts/:id/events/', async (c) => {
    const parsed = SerialIdParams.safeParse({ id: c.req.param('id') });
    if (!parsed.success) throw rolloutNotFound(c.req.param('id'));
    const rollout = await ctx.rollouts.require(parsed.data.id);
    return new Response(ctx.rolloutStreams.open(rollout, c.env.outgoing), { status: 200, headers: SSE_HEADERS });
  });

  return app;
}
