import { createReadStream } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { Hono } from 'hono';
import type { AppEnv } from '../app-context.ts';

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
<div id="ui"></div>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script>
  window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#ui', deepLinking: true, tryItOutEnabled: true });
</script>
</body>
</html>`;

/** A page to read and try the API, served from the bundled swagger-ui (no CDN). */
export function docsRoutes() {
  const app = new Hono<AppEnv>();
  app.get('/api/docs/', (c) => c.html(page));
  app.get('/api/docs/assets/:file', (c) => {
    const file = c.req.param('file');
    const type = ASSETS[file];
    if (!type) return c.notFound();
    const stream = Readable.toWeb(createReadStream(path.join(swaggerDir, file))) as ReadableStream;
    return new Response(stream, { headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' } });
  });
  return app;
}
