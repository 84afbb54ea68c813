/** The relative-import graph of a package's sources, shared by the architecture tests. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** `import … from './x.ts'`, `export … from '../y.ts'`, `import('./z.ts')`, `import './w.ts'`. */
const IMPORT_PATTERN = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

/** A source's text without its comments (a path named in a comment is no import). */
export function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\/|(^|[^:])\/\/.*$/gm, '$1');
}

/** Every `.ts` and `.tsx` source under `dir` (declaration files aside). */
export function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

/** Relative imports of each file, resolved to files (only those inside `files`). */
export function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = withoutComments(fs.readFileSync(file, 'utf8'));
    const targets = new Set<string>();
    for (const match of text.matchAll(IMPORT_PATTERN)) {
      const target = path.resolve(path.dirname(file), match[1]!);
      for (const candidate of [target, `${target}.ts`, `${target}.tsx`, path.join(target, 'index.ts'), path.join(target, 'index.tsx')]) {
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

/**
 * The same graph a folder at a time: each top folder under `srcDir` is one node (`agent-link/`),
 * each file at the top its own (`app.ts`). Every arrow keeps the file imports behind it
 * (`from → to`), to name them when the folders form a cycle.
 */
export function folderGraph(graph: ReadonlyMap<string, readonly string[]>, srcDir: string): Map<string, Map<string, string[]>> {
  const rel = (f: string) => path.relative(srcDir, f).split(path.sep).join('/');
  const folderOf = (f: string) => {
    const r = rel(f);
    const slash = r.indexOf('/');
    return slash < 0 ? r : r.slice(0, slash + 1);
  };
  const folders = new Map<string, Map<string, string[]>>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    const arrows = folders.get(from) ?? new Map<string, string[]>();
    folders.set(from, arrows);
    for (const target of targets) {
      const to = folderOf(target);
      if (to === from) continue;
      arrows.set(to, [...(arrows.get(to) ?? []), `${rel(file)} → ${rel(target)}`]);
    }
  }
  return folders;
}
