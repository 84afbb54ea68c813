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
