#!/usr/bin/env node
// In the workspace: runs the TypeScript sources through tsx's loader (no build step).
// Installed from the package (`npm pack`, `npm install -g`): the one-file bundle dist/mm.mjs,
// which needs nothing but Node >= 20.
import fs from 'node:fs';

const sources = new URL('../src/main.ts', import.meta.url);
if (fs.existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(sources.href);
} else {
  await import('../dist/mm.mjs');
}
