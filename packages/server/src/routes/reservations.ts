import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { requestAuth, setAuditTarget } from '../auth/request-auth.ts';
import { PageQuery, SerialIdParams } from '../http/params.ts';
import { requireJson } from '../http/openapi.ts';
import { validationHook } from '../http/validation.ts';
import {
  RESERVATION_STATUSES,
  ReservationCreateSchema,
  ReservationListSchema,
  ReservationRenewSchema,
  ReservationSchema,
} from '../reservations/reservation-object.ts';
import { reservationNotFound } from '../reservations/reservations.ts';

const ListQuery = z.object({
  board_id: z.string().uuid().optional(),
  status: z.enum(RESERVATION_STATUSES).optional(),
  mine: z.enum(['0', '1']).optional().openapi({ description: '`1`: only the caller\'s' }),
  ...PageQuery.shape,
});

const notFoundResponse = { description: 'No such reservation (problem+json, `reservation_not_found`)' } as const;

const createRoute_ = createRoute({
  method: 'post',
  path: '/api/reservations/',
  tags: ['reservations'],
  summary: 'Reserve a board (named, or any idle board matching a selector) for a while',
  description:
    'Exactly one of `board_id` and `board_selector`. `duration_s` is at most `MM_RESERVATION_MAX_S` (default 8 h). When the board is ' +
    'free (a named board nobody holds; for a selector, an idle, linked, healthy board nobody holds) the lease starts now: 201. ' +
    'Otherwise the request waits its turn, first come first served per board or selector: 202 with `position` and ' +
    '`estimated_start_at`; it ends `wait_timeout` after `wait_s` (default 3600). A lease ends by itself at `ends_at`. ' +
    'While it holds, the board takes no selector or rollout work but its holder\'s, and others\' work naming it waits.',
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: ReservationCreateSchema } } } },
  responses: {
    201: { description: 'The lease, in force now', content: { 'application/json': { schema: ReservationSchema } } },
    202: { description: 'The request, waiting its turn', content: { 'application/json': { schema: ReservationSchema } } },
    400: { description: '`validation_failed` (both or neither of board_id and board_selector, duration_s over the maximum), `no_matching_board`' },
    404: { description: '`board_not_found`' },
    409: { description: '`already_reserved`: the caller holds that board already (renew instead)' },
    415: { description: 'The body is not application/json' },
  },
});

const listRoute = createRoute({
  method: 'get',
  path: '/api/reservations/',
  tags: ['reservations'],
  summary: 'List reservations, newest first',
  request: { query: ListQuery },
  responses: {
    200: { description: 'A page of reservations and the number of all matches', content: { 'application/json': { schema: ReservationListSchema } } },
    400: { description: 'Bad filter (`validation_failed`)' },
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/api/reservations/{id}/',
  tags: ['reservations'],
  summary: 'A reservation (a waiting one with its position and estimate)',
  request: { params: SerialIdParams },
  responses: { 200: { description: 'The reservation', content: { 'application/json': { schema: ReservationSchema } } }, 404: notFoundResponse },
});

const renewRoute = createRoute({
  method: 'post',
  path: '/api/reservations/{id}/renew/',
  tags: ['reservations'],
  summary: 'Renew a lease: it now ends `duration_s` from now (holder or admin)',
  middleware: [requireJson] as const,
  request: { params: SerialIdParams, body: { required: true, content: { 'application/json': { schema: ReservationRenewSchema } } } },
  responses: {
    200: { description: 'The lease', content: { 'application/json': { schema: ReservationSchema } } },
    400: { description: '`validation_failed` (duration_s over MM_RESERVATION_MAX_S)' },
    403: { description: 'Not the holder, nor an admin' },
    404: notFoundResponse,
    409: { description: '`reservation_not_active`: it waits or has ended' },
    415: { description: 'The body is not application/json' },
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/api/reservations/{id}/',
  tags: ['reservations'],
  summary: 'Release a lease, or withdraw a waiting request (holder or admin; an admin ending another\'s lease is audited)',
  request: { params: SerialIdParams },
  responses: { 204: { description: 'Ended (or had ended already)' }, 403: { description: 'Not the holder, nor an admin' }, 404: notFoundResponse },
});

/** Reservations (docs/reservations.md). */
export function reservationRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(reservationNotFound) });
  const who = () => requestAuth().principal;

  app.openapi(createRoute_, async (c) => {
    const r = await ctx.reservations.create(c.req.valid('json'), who());
    setAuditTarget(r.board_id ? `board ${r.board_id}` : `reservation ${r.id}`, { reservation_id: r.id, status: r.status, duration_s: r.duration_s });
    const headers = { location: `/api/reservations/${r.id}/` };
    return r.status === 'active' ? c.json(r, 201, headers) : c.json(r, 202, headers);
  });

  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    return c.json(await ctx.reservations.list({ boardId: q.board_id, status: q.status, mine: q.mine === '1' }, { limit: q.limit, offset: q.offset }, who()), 200);
  });

  app.openapi(getRoute, async (c) => c.json(await ctx.reservations.require(c.req.valid('param').id), 200));

  app.openapi(renewRoute, async (c) => {
    const { id } = c.req.valid('param');
    const r = await ctx.reservations.renew(id, c.req.valid('json').duration_s, who());
    setAuditTarget(r.board_id ? `board ${r.board_id}` : `reservation ${id}`, { reservation_id: id, ends_at: r.ends_at });
    return c.json(r, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const { id } = c.req.valid('param');
    setAuditTarget(`reservation ${id}`);
    await ctx.reservations.release(id, who());
    return c.body(null, 204);
  });

  return app;
}
