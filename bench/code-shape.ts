/**
 * The shape of the code at a commit (run by hand, prints figures; not a test):
 *
 *   npx tsx bench/code-shape.ts [REF]     (REF: a commit, default HEAD)
 *
 * - lines of TypeScript per package (sources only: no tests, no generated schema.d.ts);
 * - the biggest source files;
 * - maps and sets that hold per-operation state in packages/server/src/operations/ (a class
 *   field `readonly x = new Map<number, …>` / `new Set<number>` keyed by operation id, or
 *   keyed by board and holding an operation id), each named;
 * - `setTimeout(` / `Date.now()` / `setInterval(` sites outside the Clock (that is, not
 *   `clock.setTimeout`) in packages/server/src and packages/agent/src, per folder.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ref = process.argv[2] ?? 'HEAD';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const git = (...args: string[]) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

const files = git('ls-tree', '-r', '--name-only', ref)
  .split('\n')
  .filter((f) => /^packages\/[^/]+\/src\/.*\.tsx?$/.test(f) && !f.endsWith('.d.ts'));
const text = new Map(files.map((f) => [f, git('show', `${ref}:${f}`)]));
const lines = (f: string) => (text.get(f)!.match(/\n/g) ?? []).length;

console.log(`code shape at ${git('rev-parse', '--short', ref).trim()}`);
console.log('\nlines per package (src, no tests, no generated files)');
const perPackage = new Map<string, number>();
for (const f of files) perPackage.set(f.split('/')[1]!, (perPackage.get(f.split('/')[1]!) ?? 0) + lines(f));
for (const [p, n] of [...perPackage].sort()) console.log(`  ${p.padEnd(12)} ${String(n).padStart(6)}`);

console.log('\nbiggest files');
for (const f of [...files].sort((a, b) => lines(b) - lines(a)).slice(0, 10)) console.log(`  ${String(lines(f)).padStart(5)}  ${f}`);

console.log('\nper-operation maps in packages/server/src/operations/');
const PER_OP = /readonly (\w+) = new (?:Map<number,|Set<number>|Map<string, number>)/g;
let maps = 0;
for (const f of files.filter((f) => f.startsWith('packages/server/src/operations/'))) {
  const names = [...text.get(f)!.matchAll(PER_OP)].map((m) => m[1]);
  if (names.length) console.log(`  ${names.length}  ${f.slice('packages/server/src/operations/'.length)}: ${names.join(', ')}`);
  maps += names.length;
}
console.log(`  total ${maps}`);

console.log('\nsetTimeout / setInterval / Date.now sites outside the Clock');
const RAW_TIME = /(?<![.\w])(?:setTimeout|setInterval)\(|\bDate\.now\(\)/g;
for (const pkg of ['server', 'agent']) {
  const perDir = new Map<string, number>();
  for (const f of files.filter((f) => f.startsWith(`packages/${pkg}/src/`))) {
    // Comments do not count; the Clock's own implementation is not a site.
    const code = text.get(f)!.replace(/\/\*[\s\S]*?\*\/|(^|[^:])\/\/.*$/gm, '$1');
    const n = code.match(RAW_TIME)?.length ?? 0;
    const dir = f.split('/').slice(3, -1).join('/') || '.';
    if (n) perDir.set(dir, (perDir.get(dir) ?? 0) + n);
  }
  const total = [...perDir.values()].reduce((a, b) => a + b, 0);
  console.log(`  ${pkg}: ${total}  (${[...perDir].sort().map(([d, n]) => `${d} ${n}`).join(', ')})`);
}
