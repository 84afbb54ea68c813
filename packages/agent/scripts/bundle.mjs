#!/usr/bin/env node
// `pnpm run bundle` (or `node scripts/bundle.mjs [OUT_DIR] [NAME=ENTRY]`): the board agent as one file,
// dist/mm-agent.mjs, that runs with plain Node >= 20 on arm64 and x86-64 from any folder:
// no node_modules, no tsx. Beside it go the files the agent finds through
// `new URL('./x', import.meta.url)` (the simulated board's child programs).
//
// Why these settings:
// - Everything is bundled, workspace .ts packages included (externalizing packages would
//   leave `@mm/protocol` pointing at .ts sources that plain node cannot load).
// - ESM output with a `createRequire` banner: CommonJS dependencies (ws, the emscripten
//   h264-mp4-encoder, whose wasm is inlined as base64) call `require('fs')` etc., which
//   esbuild's ESM output can only satisfy with a real `require` in scope.
// - bufferutil / utf-8-validate stay out: optional native addons of ws, which falls back to
//   JavaScript when their require fails; bufferutil has no linux-arm64 prebuild anyway, and
//   the agent mostly receives (unmasking server frames needs neither).
// - JavaScript only, no native code: the same files run on arm64 and x86-64.
// - NAME=ENTRY bundles another program instead of the agent (NAME.mjs from ENTRY, a path in
//   this package), with what it finds beside it: the simulated runner's cached bundle
//   (src/simulate/simulated-programs.ts).
// - Paths move: after bundling, `import.meta.url` is the bundle's URL, not the source
//   module's. The `besideFiles` plugin rewrites every `new URL('<relative>', import.meta.url)`
//   to a file next to the bundle and puts that file there (scripts bundled the same way,
//   other files and folders copied).
import fs from 'node:fs/promises';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const pkgDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const outDir = path.resolve(process.argv[2] ?? path.join(pkgDir, 'dist'));
const pkg = JSON.parse(await fs.readFile(path.join(pkgDir, 'package.json'), 'utf8'));
// A build of another version (packages, update tests): MM_AGENT_BUILD_VERSION replaces the
// version the bundle reports (AGENT_VERSION, read from the inlined package.json).
const version = process.env.MM_AGENT_BUILD_VERSION || pkg.version;
const ownPackageJson = path.join(pkgDir, 'package.json');

const SCRIPT = /\.(ts|mts|js|mjs)$/;
// `createRequire(import.meta.url)('../package.json')` (how version.ts reads the version) would
// look for the file next to the bundle at run time: inline relative JSON requires instead.
const REQUIRE_JSON = /\brequire\(\s*(['"])(\.{1,2}\/[^'"]+\.json)\1\s*\)/g;
const URL_OF_FILE = /new URL\(\s*(['"])(\.{1,2}\/[^'"]+)\1\s*,\s*import\.meta\.url\s*\)/g;
// `import.meta.url === pathToFileURL(process.argv[1]).href`-style guards are true for every
// module inside a bundle; only an entry may use one.
const MAIN_GUARD = /import\.meta\.url[^\n;]{0,80}process\.argv\[1\]|process\.argv\[1\][^\n;]{0,80}import\.meta\.url/;

/** Absolute source path → name beside the bundle; filled while bundling. */
const beside = new Map();
const besideName = (abs) => {
  let name = beside.get(abs);
  if (name) return name;
  const ext = path.extname(abs);
  const stem = path.basename(abs, ext);
  const outExt = SCRIPT.test(abs) ? '.mjs' : ext;
  const taken = new Set([...beside.values(), 'mm-agent.mjs']);
  name = `${stem}${outExt}`;
  for (let i = 2; taken.has(name); i++) name = `${stem}-${i}${outExt}`;
  beside.set(abs, name);
  return name;
};

const besideFiles = (entrySources) => ({
  name: 'beside-files',
  setup(build) {
    build.onLoad({ filter: SCRIPT }, async (args) => {
      const text = await fs.readFile(args.path, 'utf8');
      const inWorkspace = !args.path.split(path.sep).includes('node_modules');
      if (inWorkspace && !entrySources.has(args.path) && MAIN_GUARD.test(text)) {
        throw new Error(`${path.relative(pkgDir, args.path)}: an argv[1]-based main guard would fire inside the bundle`);
      }
      if (!inWorkspace || !text.includes('import.meta.url')) return undefined;
      let contents = text.replace(URL_OF_FILE, (_m, _q, rel) => {
        const name = besideName(path.resolve(path.dirname(args.path), rel));
        return `new URL(${JSON.stringify(`./${name}`)}, import.meta.url)`;
      });
      const jsons = [...contents.matchAll(REQUIRE_JSON)];
      for (const [call, , rel] of jsons) {
        const jsonPath = path.resolve(path.dirname(args.path), rel);
        const json = JSON.parse(await fs.readFile(jsonPath, 'utf8'));
        if (jsonPath === ownPackageJson) json.version = version;
        contents = contents.replace(call, `(${JSON.stringify(json)})`);
      }
      const loader = /\.m?ts$/.test(args.path) ? 'ts' : 'js';
      return { contents, loader, resolveDir: path.dirname(args.path) };
    });
  },
});

const banner = [
  `// mm-agent ${version}, bundled by packages/agent/scripts/bundle.mjs`,
  "import { createRequire as __mmCreateRequire } from 'node:module';",
  'const require = __mmCreateRequire(import.meta.url);',
].join('\n');

async function bundle(entryPoints) {
  const result = await esbuild.build({
    absWorkingDir: pkgDir,
    entryPoints,
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    splitting: false, // one self-contained file per program
    external: ['bufferutil', 'utf-8-validate'],
    banner: { js: banner },
    plugins: [besideFiles(new Set(Object.values(entryPoints).map((p) => path.resolve(pkgDir, p))))],
    metafile: true,
    logLevel: 'warning',
  });
  checkImports(result.metafile);
  for (const name of Object.keys(entryPoints)) await makeExecutable(path.join(outDir, `${name}.mjs`));
}

/** Anything left for node to resolve at run time must be a builtin or a deliberate external. */
function checkImports(metafile) {
  const builtins = new Set(builtinModules.map((m) => m.split('/')[0]));
  const allowed = new Set(['bufferutil', 'utf-8-validate']);
  for (const [file, out] of Object.entries(metafile.outputs)) {
    for (const imp of out.imports) {
      if (!imp.external || allowed.has(imp.path)) continue;
      if (builtins.has(imp.path.replace(/^node:/, '').split('/')[0])) continue;
      throw new Error(`${file} still imports ${imp.path} at run time: bundle it or put it beside`);
    }
  }
}

/** One hashbang, on the first line (esbuild keeps a source's own, above the banner), and +x. */
async function makeExecutable(file) {
  const lines = (await fs.readFile(file, 'utf8')).split('\n');
  if (lines[0]?.startsWith('#!')) lines.shift();
  await fs.writeFile(file, ['#!/usr/bin/env node', ...lines].join('\n'));
  await fs.chmod(file, 0o755);
}

const [entryName, entrySource] = (process.argv[3] ?? 'mm-agent=src/main.ts').split('=');
if (!entryName || !entrySource) throw new Error(`usage: bundle.mjs [OUT_DIR] [NAME=ENTRY], not ${process.argv[3]}`);
await fs.rm(outDir, { recursive: true, force: true });
await bundle({ [entryName]: entrySource });

// Files found beside: scripts become bundles of their own (which may find more), the rest is copied.
const done = new Set();
for (let pending = [...beside.keys()]; pending.length > 0; pending = [...beside.keys()].filter((k) => !done.has(k))) {
  for (const abs of pending) {
    done.add(abs);
    const name = beside.get(abs);
    const stat = await fs.stat(abs).catch(() => undefined);
    if (!stat) throw new Error(`${abs} (found through import.meta.url) does not exist`);
    if (stat.isFile() && SCRIPT.test(abs)) await bundle({ [name.replace(/\.mjs$/, '')]: abs });
    // Python's byte-code caches (mm-runner's, after a local run) are not part of the program.
    else await fs.cp(abs, path.join(outDir, name), { recursive: true, preserveTimestamps: true, filter: (src) => path.basename(src) !== '__pycache__' });
  }
}

console.log(`bundled into ${path.relative(process.cwd(), outDir) || '.'}: ${(await fs.readdir(outDir)).sort().join(', ')}`);
