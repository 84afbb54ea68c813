#!/usr/bin/env node
// Runs the TypeScript sources through tsx's loader (no build step in the workspace).
// On a board, the esbuild bundle in dist/ is run with plain node instead.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
