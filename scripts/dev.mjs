#!/usr/bin/env node
// `pnpm start`: the control plane on the embedded database, for trying Model Manager
// on a laptop. Ctrl-C stops everything.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const server = spawn(process.execPath, [path.join(root, 'packages/server/bin/mm-server.mjs')], {
  cwd: root,
  stdio: 'inherit',
  env: process.env,
});
const stop = () => server.kill('SIGTERM');
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
server.on('exit', (code) => process.exit(code ?? 0));
