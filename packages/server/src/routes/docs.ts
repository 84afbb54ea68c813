import { createReadStream } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { asyncApiDocument } from '@mm/protocol';
import type { AppEnv } from '../http/app-env.ts';

const require = createRequire(import.meta.url);
const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Model Manager API</title>
<link rel="stylesheet" href="/api/docs/assets/swagger-ui.css">
</head>
<body>
<div id="ui" data-openapi-url="/api/openapi.json"></div>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script src="/api/docs/assets/init.js"></script>
</body>
</html>`;

/** Its own file, not inline: the Content-Security-Policy (auth/security-headers.ts) allows no inline script. */
const INIT_SCRIPT =
  "window.ui = SwaggerUIBundle({ url: document.getElementById('ui').dataset.openapiUrl, dom_id: '#ui', deepLinking: true, tryItOutEnabled: true });\n";

const pageRoute = createRoute({
  method: 'get',
  path: '/api/docs/',
  tags: ['service'],
  summary: 'A page to read and try the API (swagger-ui)',
  responses: { 200: { description: 'The page', content: { 'text/html': { schema: z.string() } } } },
});

const asyncApiRoute = createRoute({
  method: 'get',
  path: '/api/agent/asyncapi/',
  tags: ['service'],
  summary: 'The agent link (WebSocket) as an AsyncAPI 3.0 document, generated from the message catalog',
  responses: {
    200: {
      description: 'AsyncAPI 3.0 document',
      content: { 'application/json': { schema: z.record(z.string(), z.unknown()).openapi('AsyncApiDocument') } },
    },
  },
});

/** A page to read and try the API, served from the bundled swagger-ui (no CDN), and the agent link's document. */
export function docsRoutes(version?: string) {
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(pageRoute, (c) => c.html(page, 200));
  // Built once, on first request: it only changes with the code.
  let asyncApi: Record<string, unknown> | undefined;
  app.openapi(asyncApiRoute, (c) => c.json((asyncApi ??= asyncApiDocument(version ? { serverVersion: version } : {})), 200));
  app.get('/api/docs/assets/:file', (c) => {
    const file = c.req.param('file');
    // The page's own script (the Content-Security-Policy allows no inline script).
    if (file === 'init.js') return c.body(INIT_SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' });
    const type = ASSETS[file];
    if (!type) return c.notFound();
    const stream = Readable.toWeb(createReadStream(path.join(swaggerDir, file))) as ReadableStream;
    return new Response(stream, { headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' } });
  });
  return app;
}
