// Bundles the client into dist/mm.mjs: one file, every dependency inlined, runs on plain
// Node >= 20 with nothing installed.
import { build } from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const outfile = process.argv[2] ? path.resolve(process.argv[2]) : path.join(here, '..', 'dist', 'mm.mjs');

await build({
  entryPoints: [path.join(here, '..', 'src', 'main.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  minify: false,
  legalComments: 'none',
  // commander and cli-progress are CommonJS: give them a require() inside the ESM bundle.
  banner: { js: "#!/usr/bin/env node\nimport { createRequire as __mmCreateRequire } from 'node:module';\nconst require = __mmCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
console.log(outfile);
