import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The simulated runner's source, found next to this module: the `.ts` file under tsx, a
 * `.mjs` bundled beside dist/mm-agent.mjs after `pnpm run bundle` (whose besideFiles
 * plugin rewrites this `new URL(…, import.meta.url)`).
 */
const runnerUrl = new URL('./simulated-runner.ts', import.meta.url);

let cached: string[] | undefined;

/**
 * argv of the simulated runner: plain node for a bundle. From the TypeScript sources (the
 * workspace: `pnpm start`, the tests), a bundle of the runner alone, built once per change of
 * its sources and kept under node_modules/.cache: every simulated run starts a runner, and
 * under tsx each start cost about twice the CPU (1.2 s against 0.6 s), the largest share of
 * the test suite's. Where no bundle can be made (no esbuild), tsx's loader runs the source.
 */
export function simulatedRunnerCommand(): string[] {
  const script = fileURLToPath(runnerUrl);
  if (!script.endsWith('.ts')) return [process.execPath, script];
  cached ??= runnerBundle(script) ?? [process.execPath, '--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href, script];
  return cached;
}

/** The cached bundle of the runner for these sources, built if missing; undefined if it cannot be. */
function runnerBundle(script: string): string[] | undefined {
  const agentDir = path.resolve(path.dirname(script), '../..');
  const bundler = path.join(agentDir, 'scripts', 'bundle.mjs');
  const packagesDir = path.dirname(agentDir);
  if (!fs.existsSync(bundler)) return undefined;
  try {
    const key = sourcesKey([path.join(agentDir, 'src'), path.join(agentDir, 'scripts'), path.join(agentDir, 'package.json'), path.join(packagesDir, 'runner'), path.join(packagesDir, 'protocol', 'src')]);
    const cacheDir = path.join(agentDir, 'node_modules', '.cache', 'mm-simulated-runner');
    const dir = path.join(cacheDir, key);
    const bundle = path.join(dir, 'simulated-runner.mjs');
    if (fs.existsSync(bundle)) return [process.execPath, bundle];
    fs.mkdirSync(cacheDir, { recursive: true });
    // Built aside and renamed into place: agents starting together each build, one wins.
    const building = fs.mkdtempSync(path.join(cacheDir, '.build-'));
    try {
      const built = spawnSync(process.execPath, [bundler, building, `simulated-runner=${path.relative(agentDir, script)}`], { cwd: agentDir, stdio: 'ignore', timeout: 120_000 });
      if (built.status !== 0 || !fs.existsSync(path.join(building, 'simulated-runner.mjs'))) return undefined;
      try {
        fs.renameSync(building, dir);
      } catch {
        if (!fs.existsSync(bundle)) return undefined; // neither ours nor another's
      }
      // Bundles of older sources go.
      for (const old of fs.readdirSync(cacheDir)) {
        if (old !== key && !old.startsWith('.build-')) fs.rmSync(path.join(cacheDir, old), { recursive: true, force: true });
      }
      return [process.execPath, bundle];
    } finally {
      fs.rmSync(building, { recursive: true, force: true });
    }
  } catch {
    return undefined;
  }
}

/** A digest of every file's path, size and time of change under these paths (Python's caches aside). */
function sourcesKey(roots: string[]): string {
  const hash = createHash('sha256');
  const walk = (p: string): void => {
    const st = fs.statSync(p, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      for (const name of fs.readdirSync(p).sort()) {
        if (name !== '__pycache__' && name !== 'node_modules') walk(path.join(p, name));
      }
    } else {
      hash.update(`${p}\0${st.size}\0${st.mtimeMs}\n`);
    }
  };
  for (const root of roots) walk(root);
  return hash.digest('hex').slice(0, 16);
}
