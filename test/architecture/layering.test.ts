/**
 * The server's layers, as rules on its imports (type-only ones too): routes speak HTTP and
 * call services, never the database or the blob stores themselves; the event bus and the
 * metrics are below the operations and know none of their types (operations add their bus
 * topics and feed the metrics from above). A rule broken fails the test, naming each import.
 *
 * Routes hold no database handle either: no `ctx.database`, no `auth.db`, no `db` of their
 * own, so no store function (each takes a `Db`) can be called from a route.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importGraph, repoRoot, sourceFiles, withoutComments } from './import-graph.ts';

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

/** `.database` (ctx.database, auth.database) or a `db` (auth.db, `const { db } = …`), outside comments. */
const DATABASE_HANDLE = /\.database\b|\bdb\b/;

/** Each line of a route module that takes hold of the database, as `file: line`. */
export function databaseReaders(sources: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of sources) {
    for (const line of withoutComments(text).split('\n')) if (DATABASE_HANDLE.test(line)) out.push(`${file}: ${line.trim()}`);
  }
  return out.sort();
}

/** A write of the operations table: drizzle's `.insert(operations)` (update, delete) or SQL `insert into` / `update` / `delete from` operations. */
const OPERATIONS_WRITE = /\.(?:insert|update|delete)\(operations\)|\b(?:insert\s+into|update|delete\s+from)\s+"?operations"?(?![\w"])/gi;

/** Each write of the operations table, as `file: what`. */
export function operationsWriters(sources: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of sources) for (const m of withoutComments(text).matchAll(OPERATIONS_WRITE)) out.push(`${file}: ${m[0]}`);
  return out.sort();
}

describe('layering', () => {
  it('names an import that breaks a rule', () => {
    const src = '/x/src';
    const graph = new Map([
      ['/x/src/routes/videos.ts', ['/x/src/storage/results-folder.ts', '/x/src/invocations/videos.ts']],
      ['/x/src/events/event-bus.ts', ['/x/src/operations/operation-event.ts']],
      ['/x/src/invocations/videos.ts', ['/x/src/storage/results-folder.ts', '/x/src/db/schema.ts']],
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

  it('names each statement that writes the operations table', () => {
    const sources = new Map([
      ['fleet/a.ts', "await db.update(operations).set({ boardId });"],
      ['fleet/b.ts', 'sql`with r as (update operations o set board_id = null) select 1`'],
      ['fleet/c.ts', 'sql`INSERT INTO operations (kind) values (1)`; await tx.insert(operations).values(v);'],
      ['x/d.ts', "sql`delete from \"operations\" where id = 1`; await db.select().from(operations); sql`update operation_events set seq = 1`"],
    ]);
    expect(operationsWriters(sources)).toEqual([
      'fleet/a.ts: .update(operations)',
      'fleet/b.ts: update operations',
      'fleet/c.ts: .insert(operations)',
      'fleet/c.ts: INSERT INTO operations',
      'x/d.ts: delete from "operations"',
    ]);
  });

  it('lets only operations/ write the operations table (Operations owns every status change and assignment)', () => {
    const srcDir = path.join(repoRoot, 'packages/server/src');
    const files = sourceFiles(srcDir).filter((f) => !path.relative(srcDir, f).startsWith(`operations${path.sep}`));
    expect(files.length).toBeGreaterThan(50);
    const sources = new Map(files.map((f) => [path.relative(srcDir, f).split(path.sep).join('/'), fs.readFileSync(f, 'utf8')]));
    expect(operationsWriters(sources)).toEqual([]);
  });

  it('names each line of a route module that takes hold of the database', () => {
    const sources = new Map([
      ['routes/boards.ts', 'const { db } = ctx.database;\nawait listBoardRows(db, q);'],
      ['routes/users.ts', 'const rows = await listUsers(auth.db, page);'],
      ['routes/health.ts', "// the db is pinged\nawait ctx.pingDatabase();\nconst database = 'ok';\nreturn { description: 'The database is unreachable' };"],
    ]);
    expect(databaseReaders(sources)).toEqual([
      'routes/boards.ts: await listBoardRows(db, q);',
      'routes/boards.ts: const { db } = ctx.database;',
      'routes/users.ts: const rows = await listUsers(auth.db, page);',
    ]);
  });

  it('keeps the database out of every route module', () => {
    const dir = path.join(repoRoot, 'packages/server/src/routes');
    const files = sourceFiles(dir);
    expect(files.length).toBeGreaterThan(25);
    const sources = new Map(files.map((f) => [path.relative(dir, f), fs.readFileSync(f, 'utf8')]));
    expect(databaseReaders(sources)).toEqual([]);
  });

  it('holds in packages/server/src', () => {
    const srcDir = path.join(repoRoot, 'packages/server/src');
    const files = sourceFiles(srcDir);
    expect(files.length).toBeGreaterThan(50);
    expect(layeringViolations(importGraph(files), srcDir, SERVER_RULES)).toEqual([]);
  });
});
