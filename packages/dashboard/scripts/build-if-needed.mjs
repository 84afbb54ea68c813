#!/usr/bin/env node
// Runs at the workspace's install (`prepare`): builds the dashboard into dist/ so the control
// plane serves it at `/` right after `pnpm install`. Skipped when dist/ is newer than every
// source file, so a repeated install costs nothing; a failed build does not fail the install
// (the server then answers `/` with a page saying how to build it).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const built = path.join(dir, 'dist', 'index.html');

function newest(p) {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...fs.readdirSync(p).map((f) => newest(path.join(p, f))));
}

// The shared API client is bundled into the dashboard too.
const sources = ['src', 'index.html', 'vite.config.ts', 'package.json', '../api-client/src'].map((f) => path.join(dir, f));
const builtAt = fs.existsSync(built) ? fs.statSync(built).mtimeMs : 0;
if (builtAt && sources.every((s) => newest(s) <= builtAt)) {
  console.log('dashboard: dist/ is up to date');
  process.exit(0);
}
const vite = path.join(dir, 'node_modules', 'vite', 'bin', 'vite.js');
if (!fs.existsSync(vite)) {
  console.warn('dashboard: vite is not installed (production install?): not building');
  process.exit(0);
}
// Always the production build: run from a test (vitest sets NODE_ENV=test) Vite would
// otherwise keep Preact's development code, a third more JavaScript than users get.
const r = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: dir, stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' } });
if (r.status !== 0) console.warn('dashboard: the build failed; the server will say so at /');
process.exit(0);
