#!/usr/bin/env node
// `pnpm run bundle`: the webcam script as one file, dist/mm-webcam.mjs, that runs with
// plain Node >= 20 on the board (no node_modules, no tsx). Same esbuild settings as the
// agent's bundle (packages/agent/scripts/bundle.mjs explains them).
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const pkgDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const outDir = path.resolve(process.argv[2] ?? path.join(pkgDir, 'dist'));
const pkg = JSON.parse(await fs.readFile(path.join(pkgDir, 'package.json'), 'utf8'));

await fs.rm(outDir, { recursive: true, force: true });
const result = await esbuild.build({
  absWorkingDir: pkgDir,
  entryPoints: { 'mm-webcam': 'src/main.ts' },
  outdir: outDir,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  banner: {
    js: [
      '#!/usr/bin/env node',
      `// mm-webcam ${pkg.version}, bundled by packages/webcam/scripts/bundle.mjs`,
      "import { createRequire as __mmCreateRequire } from 'node:module';",
      'const require = __mmCreateRequire(import.meta.url);',
    ].join('\n'),
  },
  logLevel: 'warning',
});
if (result.errors.length > 0) process.exit(1);
await fs.chmod(path.join(outDir, 'mm-webcam.mjs'), 0o755);
console.log(`bundled ${path.relative(process.cwd(), path.join(outDir, 'mm-webcam.mjs')) || 'mm-webcam.mjs'}`);
