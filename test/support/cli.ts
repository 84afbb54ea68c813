/**
 * The `mm` client as a process, from its bundle (built once into a folder outside the
 * repository, so it runs with nothing installed next to it), with its own config and cache.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './processes.ts';

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves once the output so far matches. */
  waitFor(match: (out: { stdout: string; stderr: string }) => boolean, timeoutMs?: number): Promise<void>;
  kill(signal: NodeJS.Signals): void;
  done: Promise<CliResult>;
}

export interface CliHome {
  dir: string;
  bundle: string;
  env: Record<string, string>;
  start(args: string[], env?: Record<string, string>, cwd?: string): CliProcess;
  run(args: string[], env?: Record<string, string>, cwd?: string): Promise<CliResult>;
  cleanup(): Promise<void>;
}

export async function buildCliBundle(outDir: string): Promise<string> {
  const bundle = path.join(outDir, 'mm.mjs');
  const child = spawn(process.execPath, [path.join(repoRoot, 'packages/cli/scripts/bundle.mjs'), bundle], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`bundling the client failed: ${err}`);
  return bundle;
}

/** A folder with the client's bundle, config home, cache home and a work folder. */
export async function cliHome(): Promise<CliHome> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-cli-'));
  const bundle = await buildCliBundle(dir);
  for (const sub of ['config', 'cache', 'work']) await fs.mkdir(path.join(dir, sub));
  const env: Record<string, string> = { XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_CACHE_HOME: path.join(dir, 'cache') };
  const start = (args: string[], extra: Record<string, string> = {}, cwd = path.join(dir, 'work')): CliProcess => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env };
    for (const k of Object.keys(childEnv)) if (k.startsWith('MM_') || k.startsWith('XDG_')) delete childEnv[k];
    const child = spawn(process.execPath, [bundle, ...args], { cwd, env: { ...childEnv, ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const waiters = new Set<() => void>();
    const wake = () => waiters.forEach((w) => w());
    child.stdout.on('data', (d: Buffer) => {
      stdout += d;
      wake();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
      wake();
    });
    const done = new Promise<CliResult>((resolve) => {
      child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
      child.once('error', (err) => resolve({ code: null, signal: null, stdout, stderr: `${stderr}\nspawn failed: ${err.message}` }));
    });
    let exited = false;
    void done.then(() => {
      exited = true;
      wake();
    });
    return {
      pid: child.pid!,
      stdout: () => stdout,
      stderr: () => stderr,
      kill: (signal) => child.kill(signal),
      done,
      async waitFor(match, timeoutMs = 60_000) {
        const deadline = Date.now() + timeoutMs;
        while (!match({ stdout, stderr })) {
          if (exited) throw new Error(`mm exited before the expected output; stdout:\n${stdout}\nstderr:\n${stderr}`);
          if (Date.now() > deadline) throw new Error(`mm did not print the expected output in time; stdout:\n${stdout}\nstderr:\n${stderr}`);
          await new Promise<void>((r) => {
            const t = setTimeout(r, 100);
            waiters.add(() => {
              clearTimeout(t);
              r();
            });
          });
          waiters.clear();
        }
      },
    };
  };
  return {
    dir,
    bundle,
    env,
    start,
    run: (args, extra, cwd) => start(args, extra, cwd).done,
    cleanup: () => fs.rm(dir, { recursive: true, force: true }),
  };
}
