import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Builds a package's bundle with its own bundler into `outDir` (never into the workspace's
 * dist/, which other work may be using), exactly as `pnpm run bundle` does. The server's
 * bundle loads its dependencies from node_modules: its `outDir` must be inside its package.
 */
export function buildBundle(pkg: 'agent' | 'gpio-motor' | 'server', outDir: string): void {
  const script = path.join(repoRoot, 'packages', pkg, 'scripts/bundle.mjs');
  const r = spawnSync(process.execPath, [script, outDir], { cwd: path.dirname(path.dirname(script)), encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`bundling ${pkg} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
}

/**
 * Runs `pnpm run package:agent`'s script (deploy/agent/package/build-debs.mjs) into `outDir`
 * with these arguments (`--version`, `--arch`, `--no-node`, `--bundle`); answers its output.
 */
export function buildAgentPackages(outDir: string, args: string[] = [], timeoutMs = 900_000): string {
  const script = path.join(repoRoot, 'deploy/agent/package/build-debs.mjs');
  const r = spawnSync(process.execPath, [script, '--out', outDir, ...args], { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`building the agent packages failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}
