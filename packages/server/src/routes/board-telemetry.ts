import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { notFound } from '../errors.ts';
import type { AppEnv } from '../http/app-env.ts';
import { validationHook } from '../http/validation.ts';
import { IdParams } from '../http/params.ts';
import type { Services } from '../services.ts';
import { TelemetrySampleSchema } from '../boards/telemetry-schema.ts';

const SinceQuery = z.object({
  since: z
    .string()
    .datetime({ offset: true, message: 'must be an ISO 8601 date and time (2026-11-27T04:00:00Z)' })
    .optional()
    .openapi({ description: 'Samples from this time on (default, and at most: the last 24 h).' }),
});

const TelemetrySamples = z
  .object({ samples: z.array(TelemetrySampleSchema).openapi({ description: 'One sample a minute (the first of each), oldest first.' }) })
  .openapi('TelemetrySamples');

const telemetryRoute = createRoute({
  method: 'get',
  path: '/api/boards/{id}/telemetry/',
  tags: ['boards'],
  summary: "A board's telemetry over the last 24 h, one sample a minute",
  request: { params: IdParams, query: SinceQuery },
  responses: {
    200: { description: 'The samples', content: { 'application/json': { schema: TelemetrySamples } } },
    400: { description: 'Bad input (problem+json, `validation_failed`)' },
    404: { description: 'No such board (problem+json, `board_not_found`)' },
  },
});

/** `GET /api/boards/<id>/telemetry/`: the per-minute samples the server keeps for 24 h. */
export function boardTelemetryRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.board) });

  app.openapi(telemetryRoute, async (c) => {
    const { id } = c.req.valid('param');
    const { since } = c.req.valid('query');
    await ctx.boards.require(id);
    const samples = await ctx.telemetry.samples(id, since === undefined ? undefined : new Date(since));
    return c.json({ samples }, 200);
  });

  return app;
}
