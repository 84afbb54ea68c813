#!/usr/bin/env node
// `pnpm run bundle` (or `node scripts/bundle.mjs [OUT_DIR]`): the board agent as one file,
// dist/mm-agent.mjs, that runs with plain Node >= 20 on arm64 and x86-64 from any folder,
// no node_modules and no tsx needed. Beside it go the programs the agent starts as child
// processes with --simulate (they must be files of their own), bundled the same way.
//
// Why these settings:
// - Everything is bundled, workspace .ts packages included (externalizing packages would
//   leave `@mm/protocol` pointing at .ts sources that plain node cannot load).
// - ESM output with a `createRequire` banner: CommonJS dependencies (ws, the emscripten
//   h264-mp4-encoder) call `require('fs')` etc., which esbuild's ESM output can only
//   satisfy with a real `require` in scope.
// - bufferutil / utf-8-validate stay out: they are optional native addons of ws (it falls
//   back to JS when the require fails) and have no linux-arm64 prebuild anyway; the agent
//   mostly receives, and unmasking server frames needs neither.
// - JavaScript only, no native code: the same bundle runs on arm64 and x86-64.
import fs from 'node:fs/promises';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const pkgDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const outDir = path.resolve(process.argv[2] ?? path.join(pkgDir, 'dist'));
const pkg = JSON.parse(await fs.readFile(path.join(pkgDir, 'package.json'), 'utf8'));

/**
 * Output name (without .mjs, relative to dist/) → source. The first is the agent; the others
 * are the simulated board's child programs, which the agent finds next to itself (see
 * src/simulate/programs.ts: `<dir of the running module>/<name>.mjs` in the bundle, the
 * `.ts` source under tsx).
 */
const entries = {
  'mm-agent': 'src/main.ts',
};
for (const [name, source] of Object.entries(await simulatedPrograms())) entries[name] = source;

/** Every standalone program under src/simulate/ (a file that starts with a shebang line). */
async function simulatedPrograms() {
  const dir = path.join(pkgDir, 'src/simulate');
  const found = {};
  let names = [];
  try {
    names = await fs.readdir(dir);
  } catch {
    return found;
  }
  for (const name of names.sort()) {
    if (!/\.(ts|mjs)$/.test(name)) continue;
    const text = await fs.readFile(path.join(dir, name), 'utf8');
    if (text.startsWith('#!')) found[`simulate/${name.replace(/\.(ts|mjs)$/, '')}`] = `src/simulate/${name}`;
  }
  return found;
}

await fs.rm(outDir, { recursive: true, force: true });
const result = await esbuild.build({
  absWorkingDir: pkgDir,
  entryPoints: entries,
  outdir: outDir,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  // One self-contained file per program: no shared chunks to keep together.
  splitting: false,
  external: ['bufferutil', 'utf-8-validate'],
  banner: {
    js: [
      '#!/usr/bin/env node',
      `// mm-agent ${pkg.version}, bundled by packages/agent/scripts/bundle.mjs`,
      "import { createRequire as __mmCreateRequire } from 'node:module';",
      'const require = __mmCreateRequire(import.meta.url);',
    ].join('\n'),
  },
  metafile: true,
  logLevel: 'warning',
});
if (result.errors.length > 0) process.exit(1);

// A hashbang in a source would land after the banner's and be a syntax error: check.
for (const name of Object.keys(entries)) {
  const file = path.join(outDir, `${name}.mjs`);
  const text = await fs.readFile(file, 'utf8');
  if (/\n#!/.test(text)) throw new Error(`${file}: a second hashbang line`);
  await fs.chmod(file, 0o755);
}

// Anything left for node to resolve at run time must be a builtin or a deliberate external.
const builtins = new Set(builtinModules.map((m) => m.split('/')[0]));
const isBuiltin = (name) => builtins.has(name.replace(/^node:/, '').split('/')[0]);
const allowed = new Set(['bufferutil', 'utf-8-validate']);
for (const [file, out] of Object.entries(result.metafile.outputs)) {
  for (const imp of out.imports) {
    if (!imp.external) continue;
    if (allowed.has(imp.path) || isBuiltin(imp.path)) continue;
    throw new Error(`${file} still imports ${imp.path} at run time: bundle it or copy it beside`);
  }
}

console.log(`bundled ${Object.keys(entries).map((n) => `${n}.mjs`).join(', ')} into ${path.relative(process.cwd(), outDir) || '.'}`);
