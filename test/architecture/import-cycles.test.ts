/**
 * No import cycle inside a package's sources: a cycle makes load order matter and hides
 * which module depends on which. Every relative import (type-only ones too: they are
 * dependencies of the design even when erased) of every .ts file under each directory is
 * followed; a cycle fails the test, named module by module.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importGraph, repoRoot as root, sourceFiles } from './import-graph.ts';

const CHECKED_DIRS = ['packages/server/src', 'packages/agent/src', 'packages/protocol/src', 'packages/gpio-motor/src'];

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
