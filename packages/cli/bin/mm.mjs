#!/usr/bin/env node
// In the workspace: runs the TypeScript sources through tsx's loader (no build step).
// Elsewhere, run the esbuild bundle dist/mm.mjs with plain node: it needs nothing else.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
