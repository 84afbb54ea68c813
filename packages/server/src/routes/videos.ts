import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { allVideos, openResultsVideo } from '../invocations/videos.ts';
import { NotFoundError } from '../errors.ts';
import { accelRedirectPath, serveFile } from '../http/file-response.ts';
import { validationHook } from '../http/validation.ts';
import { PageQuery } from '../http/params.ts';
import { VideoSchema } from '../invocations/invocation-records.ts';

const RESULTS_PREFIX = '/api/videos/results/';

const VideoList = z.object({ videos: z.array(VideoSchema), total: z.number().int() }).openapi('VideoList');

const listRoute = createRoute({
  method: 'get',
  path: '/api/videos/',
  tags: ['videos'],
  summary: "Output videos of invocations and videos of the results folder, newest first",
  request: { query: PageQuery },
  responses: {
    200: { description: 'A page of videos and the number of all', content: { 'application/json': { schema: VideoList } } },
    400: { description: 'Bad paging parameters (problem+json)' },
  },
});

const resultsVideoNotFound = () => new NotFoundError('video_not_found', 'No such video in the results folder.');

export function videoRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(() => resultsVideoNotFound()) });

  app.openapi(listRoute, async (c) => {
    const { limit, offset } = c.req.valid('query');
    const all = await allVideos(ctx);
    return c.json({ videos: all.slice(offset, offset + limit), total: all.length }, 200);
  });

  // A path of any depth: not expressible as an OpenAPI route, so registered and documented apart.
  app.get(`${RESULTS_PREFIX}*`, async (c) => {
    // The still-encoded path: an encoded slash or dot must not turn into a separator or `..`.
    const pathname = new URL(c.req.url).pathname;
    if (!pathname.startsWith(RESULTS_PREFIX)) throw resultsVideoNotFound();
    const video = await openResultsVideo(ctx, pathname.slice(RESULTS_PREFIX.length));
    if (!video) throw resultsVideoNotFound();
    const { file, relativePath } = video;
    return serveFile(c, {
      ...file,
      ...(ctx.config.accelRedirect !== undefined ? { accelRedirect: accelRedirectPath(ctx.config.accelRedirect, ['results', ...relativePath.split('/')]) } : {}),
    }).catch((err: unknown) => {
      throw (err as NodeJS.ErrnoException).code === 'ENOENT' ? resultsVideoNotFound() : err;
    });
  });
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/api/videos/results/{path}',
    tags: ['videos'],
    summary: 'A video of the results folder (`Range` honoured); `path` may span subfolders',
    request: { params: z.object({ path: z.string().openapi({ param: { name: 'path', in: 'path' }, example: 'run-1/out.mp4' }) }) },
    responses: {
      200: { description: 'The video', content: { 'video/mp4': { schema: { type: 'string', format: 'binary' } } } },
      206: { description: 'The requested byte range' },
      404: { description: 'No such video inside the results folder' },
      416: { description: 'Range not satisfiable' },
    },
  });

  return app;
}
