import { fileURLToPath } from 'node:url';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { problem } from '../auth/schemas.ts';
import { NotFoundError } from '../errors.ts';
import { localFileOpener, serveFile } from '../http/file-response.ts';
import { CHECKSUMS_FILE, CLI_FILE, DownloadsFolder, INSTALL_SCRIPT } from '../downloads/downloads-folder.ts';
import { publicOrigin } from '../downloads/install-command.ts';

const BUILD_HINT = 'build them with `npx -y pnpm@10 run package:agent` (docs/packages.md)';

const Download = z
  .object({
    name: z.string().openapi({ example: 'mm-agent_0.1.0_arm64.deb' }),
    kind: z.enum(['agent_package', 'install_script', 'cli']),
    version: z.string().nullable(),
    arch: z.string().nullable().openapi({ description: 'Debian architecture of an agent package (`arm64`, `amd64`)' }),
    size: z.number().int(),
    sha256: z.string(),
    url: z.string(),
  })
  .openapi('Download');

const DownloadList = z
  .object({
    downloads: z.array(Download),
    total: z.number().int(),
    agent_version: z.string().nullable().openapi({ description: 'The newest agent version served (what an agent update installs by default)' }),
    missing: z.array(z.string()).openapi({ description: 'What the control plane cannot serve, and why (e.g. no packages built in MM_PACKAGES_DIR)' }),
  })
  .openapi('DownloadList');

const listRoute = createRoute({
  method: 'get',
  path: '/api/downloads/',
  tags: ['downloads'],
  summary: 'What the control plane serves for boards and people: agent packages, install-agent.sh, mm (no sign-in)',
  security: [],
  responses: { 200: { description: 'The files', content: { 'application/json': { schema: DownloadList } } } },
});

const fileParams = z.object({ file: z.string().openapi({ param: { name: 'file', in: 'path' }, example: 'install-agent.sh' }) });

/** Anyone may ask (no sign-in): the answer names the setting, never the server's folder. */
export const downloadNotFound = (name: string) =>
  new NotFoundError('download_not_found', `The control plane does not serve ${JSON.stringify(name)}: it is not in its packages folder (MM_PACKAGES_DIR); ${BUILD_HINT}.`);

/** In a checkout (not in the server bundle, where these paths do not exist): the built client and the install script. */
const WORKSPACE_FILES = [
  { name: CLI_FILE, path: fileURLToPath(new URL('../../../cli/dist/mm.mjs', import.meta.url)) },
  { name: INSTALL_SCRIPT, path: fileURLToPath(new URL('../../../../deploy/agent/install-agent.sh', import.meta.url)) },
];

/** `GET /api/downloads/` and `GET /api/downloads/<file>` (public; docs/packages.md). */
export function downloadRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>();
  const folder = new DownloadsFolder(ctx.config.packagesDir, WORKSPACE_FILES);

  app.openapi(listRoute, async (c) => {
    const files = await folder.list();
    const origin = publicOrigin(c, ctx.config);
    const missing: string[] = [];
    const arches = new Set(files.filter((f) => f.kind === 'agent_package').map((f) => f.arch));
    // Public: the setting is named, not the server's folder (an admin knows its settings).
    for (const arch of ['arm64', 'amd64']) if (!arches.has(arch)) missing.push(`no ${arch} agent package in the packages folder (MM_PACKAGES_DIR): ${BUILD_HINT}`);
    if (!files.some((f) => f.kind === 'install_script')) missing.push(`no ${INSTALL_SCRIPT} in the packages folder (MM_PACKAGES_DIR): ${BUILD_HINT}`);
    if (!files.some((f) => f.kind === 'cli')) missing.push(`no ${CLI_FILE} (the command-line client) in the packages folder (MM_PACKAGES_DIR): ${BUILD_HINT} after building the client`);
    const downloads = files.map((f) => ({ name: f.name, kind: f.kind, version: f.version, arch: f.arch, size: f.size, sha256: f.sha256, url: `${origin}/api/downloads/${f.name}` }));
    return c.json({ downloads, total: downloads.length, agent_version: (await folder.newestAgentVersion()) ?? null, missing }, 200);
  });

  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/api/downloads/{file}',
    tags: ['downloads'],
    summary: 'One served file (no sign-in); `SHA256SUMS` lists every file with its sha256',
    security: [],
    request: { params: fileParams },
    responses: {
      200: { description: 'The file', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
      404: problem('`download_not_found`: not in MM_PACKAGES_DIR (the message says how to build it)'),
    },
  });
  app.get('/api/downloads/:file', async (c) => {
    const name = c.req.param('file');
    if (name === CHECKSUMS_FILE) return c.text(await folder.checksums(), 200);
    const file = (await folder.list()).find((f) => f.name === name);
    if (!file) throw downloadNotFound(name);
    const contentType = file.kind === 'agent_package' ? 'application/vnd.debian.binary-package' : file.kind === 'install_script' ? 'text/x-shellscript; charset=utf-8' : 'text/javascript; charset=utf-8';
    return serveFile(c, {
      size: file.size,
      etag: `"${file.sha256}"`,
      lastModified: file.modifiedAt,
      contentType,
      disposition: { type: 'attachment', filename: file.name },
      open: localFileOpener(file.path),
    });
  });

  return app;
}
