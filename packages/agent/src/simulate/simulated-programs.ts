import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The simulated runner's source, found next to this module: the `.ts` file under tsx, a
 * `.mjs` bundled beside dist/mm-agent.mjs after `pnpm run bundle` (whose besideFiles
 * plugin rewrites this `new URL(…, import.meta.url)`).
 */
const runnerUrl = new URL('./simulated-runner.ts', import.meta.url);

/** argv of the simulated runner: plain node for a bundle, node with tsx's loader for the TypeScript source. */
export function simulatedRunnerCommand(): string[] {
  const script = fileURLToPath(runnerUrl);
  if (!script.endsWith('.ts')) return [process.execPath, script];
  const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return [process.execPath, '--import', tsxLoader, script];
}
