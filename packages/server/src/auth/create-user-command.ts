import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { DataDirLockedError, lockDataDir } from '../data-dir-lock.ts';
import { openDatabase } from '../db/database.ts';
import { createLogger } from '../logger.ts';
import { ApiError } from '../errors.ts';
import { AuditLog } from './audit.ts';
import { generatePassword } from './passwords.ts';
import { isRole, ROLES } from './roles.ts';
import { Username } from './schemas.ts';
import { createUser } from './users.ts';

const USAGE = `Usage: mm-server create-user <username> [--role viewer|operator|admin]

Makes a user (role viewer unless --role says otherwise) and prints a generated password
once. Uses DATABASE_URL, or the embedded database in MM_DATA_DIR (stop the server first:
the embedded database allows one process per data folder).`;

/** `mm-server create-user`: the way to make the first admin. Returns the exit code. */
export async function createUserCommand(args: string[], config: Config): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { role: { type: 'string', default: 'viewer' }, help: { type: 'boolean', short: 'h' } } });
  } catch (e) {
    console.error(`mm-server create-user: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (parsed.values.help) {
    console.log(USAGE);
    return 0;
  }
  const [username, ...extra] = parsed.positionals;
  const role = parsed.values.role;
  if (!username || extra.length) {
    console.error(`mm-server create-user: give exactly one username.\n\n${USAGE}`);
    return 2;
  }
  if (!Username.safeParse(username).success) {
    console.error('mm-server create-user: a username is 1-64 letters, digits or . _ @ -, starting with a letter or digit.');
    return 2;
  }
  if (!isRole(role)) {
    console.error(`mm-server create-user: --role must be one of ${ROLES.join(', ')}.`);
    return 2;
  }

  let lock: { release(): void } | undefined;
  if (!config.databaseUrl) {
    try {
      lock = lockDataDir(config.dataDir);
    } catch (e) {
      if (e instanceof DataDirLockedError) {
        console.error(
          `mm-server create-user: ${e.message}\nThe embedded database allows one process at a time: stop the server, ` +
            `run create-user, start the server again (or use DATABASE_URL, or POST /api/users/ as an admin).`,
        );
        return 3;
      }
      throw e;
    }
  }
  const database = await openDatabase({ databaseUrl: config.databaseUrl, embeddedDir: path.join(config.dataDir, 'pgdata') }).catch((e: unknown) => {
    lock?.release();
    throw e;
  });
  try {
    const password = generatePassword();
    const user = await createUser(database.db, username, password, role);
    await new AuditLog(database.db, createLogger('silent')).record({
      action: 'user.create',
      target: `user ${user.id}`,
      actor: null,
      ip: null,
      requestId: null,
      detail: { username: user.username, role: user.role, via: 'mm-server create-user' },
    });
    console.log(`Created ${role} "${user.username}".`);
    console.log(`Password (shown this once): ${password}`);
    return 0;
  } catch (e) {
    if (e instanceof ApiError) {
      console.error(`mm-server create-user: ${e.message}`);
      return 1;
    }
    throw e;
  } finally {
    await database.close();
    lock?.release();
  }
}
