import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { safeString, INT4_MAX } from '../http/safe-string.ts';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { validationHook } from '../http/validation.ts';
import { PageQuery, SerialIdParams } from '../http/params.ts';
import { isFinal, OPERATION_STATUSES, OperationSchema } from '../operations/operation-object.ts';
import { notFound, ValidationError } from '../errors.ts';
import { withWaiting } from '../services/operation-waiting.ts';

const ListQuery = z.object({
  board_id: z.string().uuid().optional(),
  invocation_id: z.coerce.number().int().positive().max(INT4_MAX).optional(),
  kind: safeString().min(1).max(100).optional().openapi({ example: 'execute' }),
  status: z.enum(OPERATION_STATUSES).optional(),
  health_check_id: z.coerce.number().int().positive().max(INT4_MAX).optional().openapi({ description: "Only this health check's runs (a check's history)" }),
  health_checks: z
    .enum(['0', '1'])
    .optional()
    .openapi({ description: '`1`: include the runs of health checks (`health_check_id` set), left out by default' }),
  ...PageQuery.shape,
});

const OperationList = z.object({ operations: z.array(OperationSchema), total: z.number().int() }).openapi('OperationList');

const notFoundResponse = { description: 'No such operation (problem+json, `operation_not_found`)' } as const;

const listRoute = createRoute({
  method: 'get',
  path: '/api/operations/',
  tags: ['operations'],
  summary: 'List operations, newest first',
  request: { query: ListQuery },
  responses: {
    200: { description: 'A page of operations and the number of all matches', content: { 'application/json': { schema: OperationList } } },
    400: { description: 'Bad filter (problem+json, `validation_failed`)' },
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/api/operations/{id}/',
  tags: ['operations'],
  summary: 'An operation',
  request: { params: SerialIdParams },
  responses: {
    200: { description: 'The operation', content: { 'application/json': { schema: OperationSchema } } },
    404: notFoundResponse,
  },
});

/** The most a client may ask to be replayed of a log's tail. */
const MAX_LOG_TAIL_BYTES = 16 * 1024 * 1024;
const LogTailBytes = z.coerce.number().int().min(1).max(MAX_LOG_TAIL_BYTES);

const logRoute = createRoute({
  method: 'get',
  path: '/api/operations/{id}/log/',
  tags: ['operations'],
  summary: "The operation's whole log so far",
  request: { params: SerialIdParams },
  responses: {
    200: { description: 'The runner output and the agent/server notes, in order', content: { 'text/plain': { schema: z.string() } } },
    404: notFoundResponse,
  },
});

const cancelRoute = createRoute({
  method: 'post',
  path: '/api/operations/{id}/cancel/',
  tags: ['operations'],
  summary: 'Cancel an operation',
  description:
    'A queued operation is cancelled at once. A running one is told to stop; it becomes `cancelled` when the board confirms (poll it or follow its events).',
  request: { params: SerialIdParams },
  responses: {
    202: { description: 'Cancellation accepted; the operation as it is now', content: { 'application/json': { schema: OperationSchema } } },
    403: { description: 'Role too low (`forbidden`: a step of a rollout needs the role the rollout needs, admin for every kind but `execute`) or a cross-site request (`cross_origin`)' },
    404: notFoundResponse,
    409: { description: 'The operation already ended (problem+json, `operation_finished`, with `operation`)' },
  },
});

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  // Reverse proxies (nginx) must pass events on at once.
  'x-accel-buffering': 'no',
  // Chunked from the start: the adapter then sends the head at once instead of first reading ahead.
  'transfer-encoding': 'chunked',
};

export function operationRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.operation) });

  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    const result = await ctx.operations.list(
      { boardId: q.board_id, invocationId: q.invocation_id, kind: q.kind, status: q.status, healthChecks: q.health_checks === '1' || q.health_check_id !== undefined, healthCheckId: q.health_check_id },
      { limit: q.limit, offset: q.offset },
    );
    await withWaiting(ctx, result.operations);
    return c.json(result, 200);
  });

  app.openapi(getRoute, async (c) => {
    const [op] = await withWaiting(ctx, [await ctx.operations.require(c.req.valid('param').id)]);
    return c.json(op!, 200);
  });

  app.openapi(logRoute, async (c) => {
    const { id } = c.req.valid('param');
    await ctx.operations.require(id);
    // Read from the database a page at a time as the client takes it, never whole in memory.
    const chunks = ctx.operations.events.logText(id);
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      },
      async cancel() {
        await chunks.return(undefined);
      },
    });
    return c.body(body, 200, { 'content-type': 'text/plain; charset=utf-8' });
  });

  app.openapi(cancelRoute, async (c) => {
    const { id } = c.req.valid('param');
    await ctx.rollouts.requireStepCancelRights(id);
    return c.json(await ctx.operations.cancel(id), 202);
  });

  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/api/operations/{id}/events/',
    tags: ['operations'],
    summary: "The operation's events (server-sent events)",
    description:
      'Every stored event from the start — `status`, `progress`, `log` — each with `id:` = its sequence number, then live ones, ' +
      'then `end` (data: the final operation) and the stream closes. `Last-Event-ID` resumes after that event. ' +
      'An operation that already ended replays and ends at once. Comment lines are sent while idle. The stream starts with ' +
      '`retry:` (the reconnect delay). Every event has an `id:` (a live progress report between stored events carries the ' +
      'id of the last stored one). Resuming with the `Last-Event-ID` of `end` (or any id past it) answers 204: an EventSource stops.',
    request: {
      params: SerialIdParams,
      headers: z.object({ 'last-event-id': z.string().optional().openapi({ description: 'Resume after this event id' }) }),
      query: z.object({
        log_tail_bytes: z.string().optional().openapi({
          description:
            `Replay only the last that many bytes (1–${MAX_LOG_TAIL_BYTES}) of the stored log, after one \`log_skipped\` event ` +
            '`{ "bytes": n }` (no id) saying how much came before; status and progress events are all replayed and live ones ' +
            'all follow. Ignored when resuming with `Last-Event-ID`. For a page that shows a tail of a long log.',
        }),
      }),
    },
    responses: {
      200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: z.string() } } },
      204: { description: 'The operation has ended and `Last-Event-ID` is its `end` or later: nothing more will come' },
      404: notFoundResponse,
    },
  });

  app.get('/api/operations/:id/events/', async (c) => {
    const parsed = SerialIdParams.safeParse({ id: c.req.param('id') });
    if (!parsed.success) throw notFound.operation(c.req.param('id'));
    const id = parsed.data.id;
    const operation = await ctx.operations.require(id);
    const lastHeader = c.req.header('last-event-id') ?? c.req.query('last_event_id');
    const after = lastHeader && /^\d{1,10}$/.test(lastHeader.trim()) ? Number(lastHeader.trim()) : 0;
    // Resuming past the `end` of a finished operation: nothing will ever come. 204 is what
    // tells an EventSource not to reconnect (a 200 of heartbeats kept every open tab's stream alive).
    if (after > 0 && isFinal(operation.status)) {
      await ctx.operations.events.flush();
      if ((await ctx.operations.events.read(id, after, 1)).length === 0) return c.body(null, 204);
    }
    const tailParam = c.req.query('log_tail_bytes');
    let logTailBytes: number | undefined;
    if (tailParam !== undefined) {
      const parsedTail = LogTailBytes.safeParse(tailParam);
      if (!parsedTail.success) throw new ValidationError([{ field: 'log_tail_bytes', message: `an integer from 1 to ${MAX_LOG_TAIL_BYTES}` }]);
      logTailBytes = parsedTail.data;
    }
    const body = ctx.operationStreams.open(id, after, c.env.outgoing, logTailBytes);
    return new Response(body, { status: 200, headers: SSE_HEADERS });
  });

  return app;
}
