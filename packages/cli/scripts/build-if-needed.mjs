#!/usr/bin/env node
// Runs at the workspace's install (`prepare`): bundles the client into dist/mm.mjs, the one
// file the control plane serves (GET /api/downloads/mm) and the package `npm pack` makes.
// Skipped when the bundle is newer than every source file (the shared API client's too);
// a failed build does not fail the install.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const built = path.join(dir, 'dist', 'mm.mjs');

function newest(p) {
  if (!fs.existsSync(p)) return 0;
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...fs.readdirSync(p).map((f) => newest(path.join(p, f))));
}

const sources = ['src', 'package.json', 'scripts/bundle.mjs', '../api-client/src'].map((f) => path.join(dir, f));
const builtAt = fs.existsSync(built) ? fs.statSync(built).mtimeMs : 0;
if (builtAt && sources.every((s) => newest(s) <= builtAt)) {
  console.log('cli: dist/mm.mjs is up to date');
  process.exit(0);
}
if (!fs.existsSync(path.join(dir, 'node_modules', 'esbuild'))) {
  console.warn('cli: esbuild is not installed (production install?): not bundling');
  process.exit(0);
}
const r = spawnSync(process.execPath, [path.join(dir, 'scripts', 'bundle.mjs')], { cwd: dir, stdio: 'inherit' });
if (r.status !== 0) console.warn('cli: bundling dist/mm.mjs failed');
process.exit(0);
