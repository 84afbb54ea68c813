import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { problem } from '../auth/schemas.ts';
import { IdParams as UuidParams, PageQuery, uuidParam } from '../http/params.ts';
import { currentActor, setAuditTarget } from '../auth/request-auth.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { requireJson } from '../http/openapi.ts';
import { safeString } from '../http/safe-string.ts';
import { validationHook } from '../http/validation.ts';
import { DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES, WEBHOOK_FORMATS } from '../webhooks/event-types.ts';
import { originOf } from '../webhooks/delivery-worker.ts';
import { WebhookUrlRefused } from '../webhooks/webhooks.ts';

const TAG = 'webhooks';
const isoTime = z.string().openapi({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' });

const webhookNotFound = (id: unknown) => new NotFoundError('webhook_not_found', `No webhook subscription with id ${String(id)}.`);
const deliveryNotFound = (id: unknown) => new NotFoundError('delivery_not_found', `No delivery ${String(id)} of this webhook subscription.`);

const WebhookUrl = safeString()
  .trim()
  .min(1, 'must not be empty')
  .max(2000, 'must be at most 2000 characters')
  .refine((s) => URL.canParse(s), 'must be an absolute URL')
  .refine((s) => !URL.canParse(s) || ['http:', 'https:'].includes(new URL(s).protocol), 'must be an http:// or https:// URL')
  .refine((s) => !URL.canParse(s) || (!new URL(s).username && !new URL(s).password), 'must not carry a user name or password (put a token in the path or query)')
  .openapi({ example: 'https://ci.example.org/hooks/model-manager' });

const Events = z
  .array(z.enum(WEBHOOK_EVENT_TYPES))
  .min(1, 'must name at least one event')
  .max(WEBHOOK_EVENT_TYPES.length * 2)
  .openapi({ description: 'The events sent to it', example: ['rollout.finished', 'board.offline'] });

export const WebhookSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string(),
    events: z.array(z.string()),
    format: z.enum(WEBHOOK_FORMATS).openapi({ description: '`standard`: `{ type, timestamp, data }`; `slack`: a Slack incoming-webhook message with blocks' }),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable().openapi({ description: 'Why the server turned it off (the receiver answered 410 Gone); null when on, or turned off by a person' }),
    created_at: isoTime,
  })
  .openapi('Webhook');

const NewWebhook = WebhookSchema.extend({
  secret: z.string().openapi({ description: 'The signing secret (`whsec_` + base64), shown this once: receivers verify `webhook-signature` with it (Standard Webhooks)', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
}).openapi('NewWebhook');

const CreateBody = z
  .object({
    url: WebhookUrl,
    events: Events,
    format: z.enum(WEBHOOK_FORMATS).default('standard'),
    enabled: z.boolean().default(true),
  })
  .strict()
  .openapi('CreateWebhook', { example: { url: 'https://ci.example.org/hooks/model-manager', events: ['rollout.finished', 'regression.detected'], format: 'standard' } });

const PatchBody = z
  .object({ url: WebhookUrl.optional(), events: Events.optional(), format: z.enum(WEBHOOK_FORMATS).optional(), enabled: z.boolean().optional() })
  .strict()
  .openapi('WebhookPatch', { example: { enabled: false } });

const WebhookList = z.object({ webhooks: z.array(WebhookSchema), total: z.number().int() }).openapi('WebhookList');

export const DeliverySchema = z
  .object({
    id: z.number().int(),
    event: z.string().openapi({ description: 'The event type', example: 'rollout.finished' }),
    event_id: z.string().openapi({ description: 'The event (its `webhook-id` is `msg_` and this id without dashes)' }),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable().openapi({ description: "The receiver's last HTTP status; null when it never answered (refused, timed out, unreachable)" }),
    last_error: z.string().nullable().openapi({ description: 'What went wrong with the last attempt (the start of the answer, a timeout, a refused address)' }),
    last_attempt_at: isoTime.nullable(),
    next_attempt_at: isoTime.nullable().openapi({ description: 'When it is tried next (pending only)' }),
    delivered_at: isoTime.nullable(),
    created_at: isoTime,
  })
  .openapi('WebhookDelivery');

const DeliveryList = z.object({ deliveries: z.array(DeliverySchema), total: z.number().int() }).openapi('WebhookDeliveryList');

const DeliveriesQuery = PageQuery.extend({
  status: z.enum(DELIVERY_STATUSES).optional(),
});

const DeliveryParams = z.object({
  id: uuidParam('id'),
  delivery_id: z
    .string()
    .regex(/^[1-9][0-9]{0,14}$/, 'must be a positive integer')
    .transform(Number)
    .openapi({ param: { name: 'delivery_id', in: 'path' }, type: 'integer', example: 1 }),
});

const refused = problem('`webhook_url_refused`: the URL is (or resolves to) a loopback, private, link-local or otherwise refused address (allowed with MM_WEBHOOK_ALLOW_PRIVATE=1); `validation_failed`');

const listRoute = createRoute({
  method: 'get',
  path: '/api/webhooks/',
  tags: [TAG],
  summary: 'Webhook subscriptions (never their secrets)',
  responses: { 200: { description: 'Every subscription, oldest first', content: { 'application/json': { schema: WebhookList } } } },
});

const createWebhookRoute = createRoute({
  method: 'post',
  path: '/api/webhooks/',
  tags: [TAG],
  summary: 'Subscribe a URL to events; answers the signing secret once',
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: CreateBody } } } },
  responses: {
    201: { description: 'The subscription and its secret', content: { 'application/json': { schema: NewWebhook } } },
    400: refused,
    415: problem('Not application/json'),
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/api/webhooks/{id}/',
  tags: [TAG],
  summary: 'A webhook subscription',
  request: { params: UuidParams },
  responses: { 200: { description: 'The subscription', content: { 'application/json': { schema: WebhookSchema } } }, 404: problem('`webhook_not_found`') },
});

const patchRoute = createRoute({
  method: 'patch',
  path: '/api/webhooks/{id}/',
  tags: [TAG],
  summary: 'Change a subscription: its URL, events, format, or turn it on or off',
  middleware: [requireJson] as const,
  request: { params: UuidParams, body: { required: true, content: { 'application/json': { schema: PatchBody } } } },
  responses: {
    200: { description: 'The subscription', content: { 'application/json': { schema: WebhookSchema } } },
    400: refused,
    404: problem('`webhook_not_found`'),
    415: problem('Not application/json'),
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/api/webhooks/{id}/',
  tags: [TAG],
  summary: 'Delete a subscription (and its delivery log)',
  request: { params: UuidParams },
  responses: { 204: { description: 'Deleted' }, 404: problem('`webhook_not_found`') },
});

const deliveriesRoute = createRoute({
  method: 'get',
  path: '/api/webhooks/{id}/deliveries/',
  tags: [TAG],
  summary: "A subscription's delivery log, newest first",
  request: { params: UuidParams, query: DeliveriesQuery },
  responses: {
    200: { description: 'A page of deliveries', content: { 'application/json': { schema: DeliveryList } } },
    400: problem('Bad input'),
    404: problem('`webhook_not_found`'),
  },
});

const redeliverRoute = createRoute({
  method: 'post',
  path: '/api/webhooks/{id}/deliveries/{delivery_id}/redeliver/',
  tags: [TAG],
  summary: 'Send a delivery again, now (with a fresh retry window); the same webhook-id',
  request: { params: DeliveryParams },
  responses: {
    202: { description: 'Pending again: the delivery', content: { 'application/json': { schema: DeliverySchema } } },
    404: problem('`webhook_not_found`, `delivery_not_found`'),
  },
});

async function refusedAs400<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof WebhookUrlRefused) throw new BadRequestError('webhook_url_refused', `The webhook URL is refused: ${err.message}. An on-premises receiver needs MM_WEBHOOK_ALLOW_PRIVATE=1.`, [{ field: 'url', message: err.message }]);
    throw err;
  }
}

/** `/api/webhooks/…` (admin; docs/webhooks.md). */
export function webhookRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(webhookNotFound) });
  const hooks = ctx.webhooks;

  app.openapi(listRoute, async (c) => {
    const webhooks = await hooks.list();
    return c.json({ webhooks, total: webhooks.length }, 200);
  });

  app.openapi(createWebhookRoute, async (c) => {
    const body = c.req.valid('json');
    const created = await refusedAs400(hooks.create(body, currentActor()));
    setAuditTarget(`webhook ${created.id}`, { receiver: originOf(created.url), events: created.events });
    return c.json(created, 201);
  });

  app.openapi(getRoute, async (c) => {
    const { id } = c.req.valid('param');
    const found = await hooks.get(id);
    if (!found) throw webhookNotFound(id);
    return c.json(found, 200);
  });

  app.openapi(patchRoute, async (c) => {
    const { id } = c.req.valid('param');
    if (!(await hooks.get(id))) throw webhookNotFound(id);
    const updated = await refusedAs400(hooks.update(id, c.req.valid('json')));
    if (!updated) throw webhookNotFound(id);
    setAuditTarget(`webhook ${id}`, { receiver: originOf(updated.url), events: updated.events, enabled: updated.enabled });
    return c.json(updated, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const { id } = c.req.valid('param');
    if (!(await hooks.remove(id))) throw webhookNotFound(id);
    setAuditTarget(`webhook ${id}`);
    return c.body(null, 204);
  });

  app.openapi(deliveriesRoute, async (c) => {
    const { id } = c.req.valid('param');
    if (!(await hooks.get(id))) throw webhookNotFound(id);
    return c.json(await hooks.deliveries(id, c.req.valid('query')), 200);
  });

  app.openapi(redeliverRoute, async (c) => {
    const { id, delivery_id } = c.req.valid('param');
    if (!(await hooks.get(id))) throw webhookNotFound(id);
    const delivery = await hooks.redeliver(id, delivery_id);
    if (!delivery) throw deliveryNotFound(delivery_id);
    setAuditTarget(`webhook ${id}`, { delivery_id });
    return c.json(delivery, 202);
  });

  return app;
}
