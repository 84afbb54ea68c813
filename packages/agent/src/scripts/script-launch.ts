import path from 'node:path';

/**
 * How a program is run (docs/device-scripts.md): `.mjs`/`.js` with the agent's own Node,
 * `.py` with `python3`, anything else executed itself. The interpreter, or undefined for
 * "run the file".
 */
export function interpreterFor(file: string): string | undefined {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.mjs' || ext === '.js' || ext === '.cjs') return process.execPath;
  if (ext === '.py') return 'python3';
  return undefined;
}

/** argv of the program at `file`. */
export function launchArgv(file: string): string[] {
  const interpreter = interpreterFor(file);
  return interpreter ? [interpreter, file] : [file];
}
