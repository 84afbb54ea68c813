import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { NotFoundError, notFound } from '../errors.ts';
import { serveFile } from '../http/file-response.ts';
import { validationHook } from '../http/validation.ts';
import { SerialId as InvocationId, SerialIdParams as InvocationIdParams } from '../http/params.ts';
import { contentSource } from '../invocations/invocation-files.ts';
import { requireInvocation } from '../invocations/invocations.ts';
import { findRunResults } from '../invocations/run-results.ts';

const ResultsQuery = z.object({
  // Operation ids are int4 keys, like invocation ids: larger numbers are bad input, not a database error.
  operation_id: InvocationId.optional().openapi({ type: 'integer', description: "One of the invocation's runs (default: its latest run that has results)" }),
});

const resultsRoute = createRoute({
  method: 'get',
  path: '/api/invocations/{id}/results/',
  tags: ['invocations', 'operations'],
  summary: "A run's per-frame results (results.jsonl)",
  description:
    'What mm-runner wrote for each frame (docs/runner.md): one JSON object a line, `{ frame, t_ms, classes?, boxes? }`. ' +
    "The latest run of the invocation that has results, or the one `operation_id` names. `Range` is honoured.",
  request: { params: InvocationIdParams, query: ResultsQuery },
  responses: {
    200: { description: 'The results, newline-delimited JSON', content: { 'application/x-ndjson': { schema: { type: 'string' as const } } } },
    206: { description: 'The requested byte range (`Range` honoured; one range per response)' },
    302: { description: 'With `MM_BLOB_STORE=s3` and `MM_S3_REDIRECT_DOWNLOADS=1`: a presigned URL on the object store' },
    304: { description: 'Not modified (`If-None-Match` / `If-Modified-Since`)' },
    400: { description: 'Bad input (`validation_failed`: a bad `operation_id`)' },
    404: { description: '`invocation_not_found`, or `results_not_found`: no run of this invocation (or not that one) has results' },
    416: { description: 'The range cannot be satisfied' },
  },
});

/** A run's results.jsonl (docs/api.md, "The runner"). */
export function invocationResultRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.invocation) });
  app.openapi(resultsRoute, async (c) => {
    const { id } = c.req.valid('param');
    const { operation_id: operationId } = c.req.valid('query');
    await requireInvocation(ctx, id);
    const row = await findRunResults(ctx, id, operationId);
    if (!row) {
      throw new NotFoundError(
        'results_not_found',
        operationId !== undefined ? `Operation ${operationId} is not a run of invocation ${id} that left results.` : `No run of invocation ${id} has left results (mm-runner writes them).`,
      );
    }
    return serveFile(c, {
      size: row.size,
      etag: `"${row.sha256}"`,
      lastModified: row.createdAt,
      contentType: row.contentType,
      disposition: { type: 'inline', filename: `results-${row.operationId}.jsonl` },
      ...contentSource(ctx, row.sha256),
    });
  });
  return app;
}
