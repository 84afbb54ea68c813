#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx's loader: no build step between
// `pnpm install` and `pnpm exec mm-server`. Production images use the same entry.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
