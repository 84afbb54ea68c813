/** The relative-import graph of a package's sources, shared by the architecture tests. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** `import … from './x.ts'`, `export … from '../y.ts'`, `import('./z.ts')`, `import './w.ts'`. */
const IMPORT_PATTERN = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

export function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

/** Relative imports of each file, resolved to files (only those inside `files`). */
export function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|(^|[^:])\/\/.*$/gm, '$1');
    const targets = new Set<string>();
    for (const match of text.matchAll(IMPORT_PATTERN)) {
      const target = path.resolve(path.dirname(file), match[1]!);
      for (const candidate of [target, `${target}.ts`, path.join(target, 'index.ts')]) {
        if (known.has(candidate)) {
          targets.add(candidate);
          break;
        }
      }
    }
    graph.set(file, [...targets]);
  }
  return graph;
}
