/**
 * No import cycle inside a package's sources: a cycle makes load order matter and hides
 * which module depends on which. Every relative import (type-only and lazy ones too: they
 * are dependencies of the design even when erased or deferred) of every .ts and .tsx file
 * under each directory is followed; a cycle fails the test, named module by module.
 *
 * The server is held to more: its folders (and the files at its top) form no cycle either,
 * so each folder sits above the ones it imports and the house reads from the top down.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { folderGraph, importGraph, repoRoot as root, sourceFiles } from './import-graph.ts';

const CHECKED_DIRS = [
  'packages/server/src',
  'packages/agent/src',
  'packages/protocol/src',
  'packages/gpio-motor/src',
  'packages/dashboard/src',
  'packages/cli/src',
  'packages/api-client/src',
  'packages/webcam/src',
];

/** Every cycle found by a depth-first search, each as the path that closes it (a → b → a). */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const s = state.get(next);
      if (s === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (s === undefined) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}

/** Each cycle of the folder graph, named with one import behind each arrow: `a/ → b/ (a/x.ts → b/y.ts) → a/ (…)`. */
export function folderCycles(folders: ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>): string[] {
  const arrows = new Map([...folders].map(([from, to]) => [from, [...to.keys()].sort()]));
  return findCycles(arrows).map((cycle) =>
    cycle.map((folder, i) => (i === 0 ? folder : `${folder} (${folders.get(cycle[i - 1]!)!.get(folder)![0]})`)).join(' → '),
  );
}

describe('import cycles', () => {
  it('finds a cycle when there is one, and names it', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(findCycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
    expect(findCycles(new Map([['a.ts', ['b.ts']], ['b.ts', []]]))).toEqual([]);
  });

  it('finds a cycle of folders whose files form none, and names an import behind each arrow', () => {
    const src = '/x/src';
    const graph = new Map([
      ['/x/src/boards/board-store.ts', ['/x/src/fleet/board-selector.ts']],
      ['/x/src/fleet/board-selector.ts', []],
      ['/x/src/fleet/scheduler.ts', ['/x/src/boards/boards.ts']],
      ['/x/src/boards/boards.ts', []],
      ['/x/src/app.ts', ['/x/src/boards/boards.ts']],
    ]);
    expect(findCycles(graph)).toEqual([]);
    expect(folderCycles(folderGraph(graph, src))).toEqual(['boards/ → fleet/ (boards/board-store.ts → fleet/board-selector.ts) → boards/ (fleet/scheduler.ts → boards/boards.ts)']);
    graph.set('/x/src/fleet/scheduler.ts', []);
    expect(folderCycles(folderGraph(graph, src))).toEqual([]);
  });

  it('has none among the folders of packages/server/src', () => {
    const srcDir = path.join(root, 'packages/server/src');
    const folders = folderGraph(importGraph(sourceFiles(srcDir)), srcDir);
    expect(folders.size).toBeGreaterThan(20);
    expect(folderCycles(folders)).toEqual([]);
  });

  for (const dir of CHECKED_DIRS) {
    it(`has none in ${dir}`, () => {
      const files = sourceFiles(path.join(root, dir));
      expect(files.length).toBeGreaterThan(3);
      const graph = importGraph(files);
      const named = findCycles(graph).map((cycle) => cycle.map((f) => path.relative(root, f)).join(' → '));
      expect(named).toEqual([]);
    });
  }
});
