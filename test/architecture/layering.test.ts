/**
 * The server's layers, as rules on its imports (type-only ones too): routes speak HTTP and
 * call services, never the database or the blob stores themselves; the event bus and the
 * metrics are below the operations and know none of their types (operations add their bus
 * topics and feed the metrics from above). A rule broken fails the test, naming each import.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importGraph, repoRoot, sourceFiles } from './import-graph.ts';

interface LayerRule {
  /** Files under this folder (relative to the package's src/)… */
  from: string;
  /** …may not import anything under these folders or these files. */
  notImporting: readonly string[];
  why: string;
}

const SERVER_RULES: readonly LayerRule[] = [
  { from: 'routes/', notImporting: ['db/', 'storage/', 'operations/store.ts'], why: 'routes go through the services' },
  { from: 'events/', notImporting: ['operations/'], why: 'the bus carries generic messages; operations define their topics' },
  { from: 'metrics/', notImporting: ['operations/'], why: 'the operations feed the metrics, not the other way round' },
  { from: 'storage/', notImporting: ['routes/', 'services/', 'operations/'], why: 'the blob stores are the bottom layer' },
];

/** Each import that breaks a rule, as `from → to (why)`, paths relative to `srcDir`. */
export function layeringViolations(graph: ReadonlyMap<string, readonly string[]>, srcDir: string, rules: readonly LayerRule[]): string[] {
  const rel = (f: string) => path.relative(srcDir, f).split(path.sep).join('/');
  const out: string[] = [];
  for (const [file, targets] of graph) {
    for (const rule of rules) {
      if (!rel(file).startsWith(rule.from)) continue;
      for (const target of targets) {
        if (rule.notImporting.some((banned) => (banned.endsWith('/') ? rel(target).startsWith(banned) : rel(target) === banned))) {
          out.push(`${rel(file)} → ${rel(target)} (${rule.why})`);
        }
      }
    }
  }
  return out.sort();
}

describe('layering', () => {
  it('names an import that breaks a rule', () => {
    const src = '/x/src';
    const graph = new Map([
      ['/x/src/routes/videos.ts', ['/x/src/storage/results-folder.ts', '/x/src/services/videos.ts']],
      ['/x/src/events/event-bus.ts', ['/x/src/operations/operation-event.ts']],
      ['/x/src/services/videos.ts', ['/x/src/storage/results-folder.ts', '/x/src/db/schema.ts']],
      ['/x/src/routes/boards.ts', ['/x/src/operations/store.ts', '/x/src/operations/operations.ts']],
    ]);
    expect(layeringViolations(graph, src, SERVER_RULES)).toEqual([
      'events/event-bus.ts → operations/operation-event.ts (the bus carries generic messages; operations define their topics)',
      'routes/boards.ts → operations/store.ts (routes go through the services)',
      'routes/videos.ts → storage/results-folder.ts (routes go through the services)',
    ]);
  });

  it('keeps the SQL of the operations in operations/store.ts (and their event log in event-log.ts)', () => {
    const dir = path.join(repoRoot, 'packages/server/src/operations');
    const SQL_OWNERS = new Set(['store.ts', 'event-log.ts']);
    // A value import of drizzle or of the tables (type-only imports of row types are fine).
    const SQL_IMPORT = /^import (?!type )[^;]*from '(?:drizzle-orm[^']*|\.\.\/db\/schema\.ts)'/m;
    const writers = sourceFiles(dir)
      .filter((f) => !SQL_OWNERS.has(path.basename(f)) && SQL_IMPORT.test(fs.readFileSync(f, 'utf8')))
      .map((f) => path.basename(f));
    expect(writers).toEqual([]);
    expect(SQL_IMPORT.test("import { and, eq } from 'drizzle-orm';")).toBe(true);
    expect(SQL_IMPORT.test("import type { AgentStart } from '../db/schema.ts';")).toBe(false);
  });

  it('holds in packages/server/src', () => {
    const srcDir = path.join(repoRoot, 'packages/server/src');
    const files = sourceFiles(srcDir);
    expect(files.length).toBeGreaterThan(50);
    expect(layeringViolations(importGraph(files), srcDir, SERVER_RULES)).toEqual([]);
  });
});
