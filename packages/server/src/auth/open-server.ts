import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import { OpenServerRefusedError } from './errors.ts';
import { isLoopbackName } from './origin.ts';
import { anyUserExists } from './users.ts';

/**
 * A server listening beyond loopback with auth off would let anyone on the network (or
 * any web page, through a browser there) drive the boards. Refuse to start that way unless
 * MM_ALLOW_NO_AUTH=1 says it is meant.
 */
export async function refuseOpenServer(config: Config, db: Db): Promise<void> {
  const host = config.host.toLowerCase().replace(/^\[|\]$/g, '');
  if (isLoopbackName(host) || config.apiToken || config.allowNoAuth) return;
  if (await anyUserExists(db)) return;
  throw new OpenServerRefusedError(
    `Refusing to listen on ${config.host} with auth off: anyone who can reach it could change everything. ` +
      `Create an admin first (mm-server create-user <username> --role admin), or set MM_API_TOKEN, ` +
      `or listen on 127.0.0.1, or set MM_ALLOW_NO_AUTH=1 if this network is trusted.`,
  );
}
