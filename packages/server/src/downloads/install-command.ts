import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Context } from 'hono';
import type { Config } from '../config.ts';
import { INSTALL_SCRIPT } from './downloads-folder.ts';

/** The control plane's origin as boards should reach it: MM_PUBLIC_URL, else the request's own. */
export function publicOrigin(c: Context, config: Pick<Config, 'publicUrl'>): string {
  return config.publicUrl ?? new URL(c.req.url).origin;
}

const quote = (s: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);

/**
 * The one line that installs the agent on a board (docs/packages.md): fetches
 * install-agent.sh from the control plane and runs it with the server URL and a board
 * token or a provisioning key.
 */
export function installCommand(origin: string, credential: { token: string } | { provisioningKey: string }): string {
  const secret = 'token' in credential ? `--token ${quote(credential.token)}` : `--provisioning-key ${quote(credential.provisioningKey)}`;
  return `curl -fsSL ${quote(`${origin}/api/downloads/${INSTALL_SCRIPT}`)} | sudo sh -s -- --server-url ${quote(origin)} ${secret}`;
}

/**
 * A warning to show with an install command (issue 39), or null: MM_PUBLIC_URL is not set (the
 * command then names the address the browser or `mm` used, which a board on another machine
 * cannot reach when it is a loopback one: `127.0.0.1`, `localhost`), or the agent packages the
 * command downloads are not built.
 */
export function installWarning(origin: string, config: Pick<Config, 'publicUrl' | 'packagesDir'>): string | null {
  const parts = [publicUrlWarning(origin, config), packagesWarning(config.packagesDir)].filter((w): w is string => w !== null);
  return parts.length ? parts.join(' ') : null;
}

/**
 * The command fetches install-agent.sh and a package from MM_PACKAGES_DIR: without them built
 * (`pnpm run package:agent`) it fails on the board; said here rather than there.
 */
function packagesWarning(dir: string): string | null {
  let debs = 0;
  try {
    debs = readdirSync(dir).filter((f) => f.endsWith('.deb')).length;
  } catch {
    debs = 0;
  }
  if (debs > 0 && existsSync(path.join(dir, INSTALL_SCRIPT))) return null;
  return `The agent packages are not built in ${dir} (MM_PACKAGES_DIR): the command fails on a board until they are (npx -y pnpm@10 run package:agent, docs/packages.md).`;
}

function publicUrlWarning(origin: string, config: Pick<Config, 'publicUrl'>): string | null {
  if (config.publicUrl) return null;
  const host = new URL(origin).hostname;
  const loopback = host === 'localhost' || host.startsWith('127.') || host === '[::1]' || host === '::1';
  return loopback
    ? `MM_PUBLIC_URL is not set: this command names ${origin}, which a board cannot reach. Set MM_PUBLIC_URL to the address boards reach the server at, or replace ${origin} in it.`
    : `MM_PUBLIC_URL is not set: this command names ${origin}, the address this request came to. Set MM_PUBLIC_URL if boards reach the server at another address.`;
}
