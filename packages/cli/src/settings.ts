import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from './errors.ts';

export const DEFAULT_SERVER = 'http://127.0.0.1:8000';

/**
 * What `mm login` saves: the server logged in to last (the default when none is named) with
 * its token, and the tokens of other servers logged in to before, by server URL. A token is
 * only ever sent to the server it was saved for.
 */
export interface SavedConfig {
  server?: string;
  token?: string;
  servers?: Record<string, { token: string }>;
}

export interface GlobalOptions {
  server?: string;
  token?: string;
  json?: boolean;
}

export interface Settings {
  server: string;
  token: string | undefined;
  json: boolean;
}

function xdg(name: 'XDG_CONFIG_HOME' | 'XDG_CACHE_HOME', fallback: string, env: NodeJS.ProcessEnv): string {
  const v = env[name];
  return v && path.isAbsolute(v) ? v : path.join(os.homedir(), fallback);
}

export function configFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(xdg('XDG_CONFIG_HOME', '.config', env), 'model-manager', 'config.json');
}

/** Hash cache and resume state: may be deleted any time (only costs re-hashing / re-sending). */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(xdg('XDG_CACHE_HOME', '.cache', env), 'model-manager');
}

export async function readConfig(file = configFile()): Promise<SavedConfig> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    return {};
  }
  try {
    const parsed = JSON.parse(text) as SavedConfig;
    const servers: Record<string, { token: string }> = {};
    for (const [url, saved] of Object.entries(parsed.servers ?? {})) if (typeof saved?.token === 'string') servers[url] = { token: saved.token };
    return {
      ...(typeof parsed.server === 'string' ? { server: parsed.server } : {}),
      ...(typeof parsed.token === 'string' ? { token: parsed.token } : {}),
      ...(Object.keys(servers).length ? { servers } : {}),
    };
  } catch {
    throw new UsageError(`The config file ${file} is not valid JSON.`, 'Fix it, or delete it and run `mm login` again.');
  }
}

/** Writes the config file with mode 0600 (it holds a token), atomically. */
export async function writeConfig(config: SavedConfig, file = configFile()): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await fs.chmod(temp, 0o600);
  await fs.rename(temp, file);
}

export function normaliseServer(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`${JSON.stringify(url)} is not a server URL.`, 'Give it as http://host:port or https://host.');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`The server URL must start with http:// or https:// (got ${url}).`);
  return parsed.toString().replace(/\/+$/, '');
}

/** The token saved for exactly this server (normalised URL), if any. */
export function savedToken(saved: SavedConfig, server: string): string | undefined {
  const matches = (url: string | undefined) => url !== undefined && normaliseServer(url) === server;
  if (matches(saved.server)) return saved.token;
  return Object.entries(saved.servers ?? {}).find(([url]) => matches(url))?.[1].token;
}

/** The config after a login to `server`: it becomes the default; other servers keep their tokens. */
export function withLogin(saved: SavedConfig, server: string, token: string): SavedConfig {
  const servers = { ...saved.servers };
  if (saved.server && saved.token && normaliseServer(saved.server) !== server) servers[saved.server] = { token: saved.token };
  delete servers[server];
  return { server, token, ...(Object.keys(servers).length ? { servers } : {}) };
}

/**
 * --server/--token, else MM_SERVER_URL/MM_API_TOKEN, else the config file, else the local
 * default. A saved token goes only to the server it was saved for.
 */
export async function resolveSettings(opts: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Promise<Settings> {
  const saved = await readConfig(configFile(env));
  const server = normaliseServer(opts.server ?? (env.MM_SERVER_URL || undefined) ?? saved.server ?? DEFAULT_SERVER);
  const token = opts.token ?? (env.MM_API_TOKEN || undefined) ?? savedToken(saved, server);
  return { server, token, json: opts.json ?? false };
}
