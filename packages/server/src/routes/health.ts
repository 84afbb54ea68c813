import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { TimerHandle } from '@mm/protocol';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';

const Health = z
  .object({
    status: z.enum(['ok', 'degraded']),
    version: z.string(),
    database: z.enum(['ok', 'unreachable']),
    boards_online: z.number().int(),
    max_upload_bytes: z.number().int().openapi({ description: 'The largest file an upload may be (MM_MAX_UPLOAD_BYTES): clients refuse larger ones before sending' }),
  })
  .openapi('Health');

const route = createRoute({
  method: 'get',
  path: '/api/health/',
  tags: ['service'],
  summary: 'Service health (no auth)',
  responses: {
    200: { description: 'Healthy', content: { 'application/json': { schema: Health } } },
    503: { description: 'The database is unreachable', content: { 'application/json': { schema: Health } } },
  },
});

export function healthRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(route, async (c) => {
    let database: 'ok' | 'unreachable' = 'ok';
    let timer: TimerHandle | undefined;
    try {
      await Promise.race([
        ctx.pingDatabase(),
        new Promise((_, reject) => {
          timer = ctx.clock.setTimeout(() => reject(new Error('timeout')), 3000);
          timer.unref();
        }),
      ]);
    } catch {
      database = 'unreachable';
    } finally {
      ctx.clock.clearTimeout(timer);
    }
    const body = {
      status: database === 'ok' ? ('ok' as const) : ('degraded' as const),
      version: ctx.version,
      database,
      boards_online: ctx.agents.onlineCount(),
      max_upload_bytes: ctx.config.maxUploadBytes,
    };
    return database === 'ok' ? c.json(body, 200) : c.json(body, 503);
  });
  return app;
}
