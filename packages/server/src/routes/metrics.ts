import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';

const route = createRoute({
  method: 'get',
  path: '/api/metrics/',
  tags: ['service'],
  summary: 'Prometheus metrics (text exposition format)',
  description:
    'HTTP requests by route pattern and status with durations (`mm_http_request_duration_seconds`), ended operations by kind and status ' +
    '(`mm_operations_total`), boards online (`mm_boards_online`), bytes moved over agent links (`mm_agent_link_bytes_total`), ' +
    'SSE clients (`mm_sse_clients`), event-loop delay (`nodejs_eventloop_lag_*`) and the process metrics. Needs a token when auth is on.',
  responses: {
    200: { description: 'The metrics', content: { 'text/plain': { schema: z.string() } } },
    401: { description: 'Missing or wrong token (problem+json, `unauthorized`)' },
  },
});

export function metricsRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(route, async (c) => {
    const text = await ctx.metrics.render();
    return c.body(text, 200, { 'Content-Type': ctx.metrics.contentType, 'Cache-Control': 'no-store' });
  });
  return app;
}
