#!/usr/bin/env node
// `pnpm run bundle` (or `node scripts/bundle.mjs [OUT_DIR]`): the control plane as one
// JavaScript file, dist/mm-server.mjs, for production (the Docker image runs it).
//
// Why a bundle: `bin/mm-server.mjs` runs the TypeScript sources through tsx's loader, whose
// hooks thread and transform cache cost ~45 MB of resident memory (idle RSS 133-143 MB
// through tsx, 93 MB bundled, on PostgreSQL) and slow every start.
//
// Why these settings:
// - Our workspace packages (@mm/*, TypeScript sources) are bundled; every other package stays
//   external and is loaded from node_modules as usual (pglite's wasm and data files, swagger
//   UI's assets, the native bufferutil all sit where their packages expect them). So OUT_DIR
//   must be inside this package, or inside a copy of it that has its node_modules (the image's
//   /app): bare imports resolve by walking up from the bundle.
// - Paths move: after bundling, `import.meta.url` is the bundle's URL, not the source
//   module's. Every `new URL('<relative>', import.meta.url)` in our sources (the migrations
//   folder) is rewritten to the same file relative to OUT_DIR; the files stay where they are.
//   A relative JSON `require` (how version.ts reads package.json) is inlined.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const pkgDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const outDir = path.resolve(process.argv[2] ?? path.join(pkgDir, 'dist'));

const URL_OF_FILE = /new URL\(\s*(['"])(\.{1,2}\/[^'"]*)\1\s*,\s*import\.meta\.url\s*\)/g;
const REQUIRE_JSON = /\brequire\(\s*(['"])(\.{1,2}\/[^'"]+\.json)\1\s*\)/g;

/** Leaves third-party packages to node_modules; bundles @mm/* and relative imports. */
const dependenciesExternal = {
  name: 'dependencies-external',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@mm/') ? undefined : { path: args.path, external: true }));
  },
};

/** Rewrites `new URL('<relative>', import.meta.url)` in our sources to point from OUT_DIR; inlines relative JSON requires. */
const filesStayInPlace = {
  name: 'files-stay-in-place',
  setup(build) {
    build.onLoad({ filter: /\.(ts|mts|js|mjs)$/ }, async (args) => {
      if (args.path.split(path.sep).includes('node_modules')) return undefined;
      const text = await fs.readFile(args.path, 'utf8');
      const json = new Map();
      for (const [, , rel] of text.matchAll(REQUIRE_JSON)) json.set(rel, await fs.readFile(path.resolve(path.dirname(args.path), rel), 'utf8'));
      const contents = text.replace(REQUIRE_JSON, (_all, _q, rel) => `(${json.get(rel).trim()})`).replace(URL_OF_FILE, (_all, _q, rel) => {
        const target = path.resolve(path.dirname(args.path), rel);
        let fromOut = path.relative(outDir, target).split(path.sep).join('/');
        if (!fromOut.startsWith('.')) fromOut = `./${fromOut}`;
        if (rel.endsWith('/') && !fromOut.endsWith('/')) fromOut += '/';
        return `new URL(${JSON.stringify(fromOut)}, import.meta.url)`;
      });
      if (contents === text) return undefined;
      return { contents, loader: /\.m?ts$/.test(args.path) ? 'ts' : 'js' };
    });
  },
};

await fs.mkdir(outDir, { recursive: true });
await esbuild.build({
  entryPoints: [path.join(pkgDir, 'src/main.ts')],
  outfile: path.join(outDir, 'mm-server.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  legalComments: 'none',
  banner: { js: '// Model Manager control plane, bundled by packages/server/scripts/bundle.mjs. Run: node mm-server.mjs' },
  plugins: [dependenciesExternal, filesStayInPlace],
  logLevel: 'warning',
});
console.log(`bundled the control plane into ${path.relative(process.cwd(), path.join(outDir, 'mm-server.mjs')) || 'mm-server.mjs'}`);

// The web dashboard's built files travel with the bundle (dist/dashboard/), where
// routes/dashboard.ts looks first; without a build the server says so at `/`.
const dashboardDist = path.resolve(pkgDir, '../dashboard/dist');
if (await fs.stat(path.join(dashboardDist, 'index.html')).catch(() => null)) {
  await fs.rm(path.join(outDir, 'dashboard'), { recursive: true, force: true });
  await fs.cp(dashboardDist, path.join(outDir, 'dashboard'), { recursive: true });
  console.log('copied the dashboard into', path.relative(process.cwd(), path.join(outDir, 'dashboard')) || 'dashboard');
}
