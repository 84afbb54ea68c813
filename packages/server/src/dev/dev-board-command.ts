import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { GPIO_MOTOR_SCRIPT } from '@mm/gpio-motor';
import { and, asc, eq } from 'drizzle-orm';
import { findBoard, insertBoard } from '../boards/board-store.ts';
import type { Config } from '../config.ts';
import { DataDirLockedError, lockDataDir } from '../data-dir-lock.ts';
import { type Db, openDatabase } from '../db/database.ts';
import { deviceScripts, users } from '../db/schema.ts';
import { sha256Hex } from '../http/auth.ts';
import { seedDeviceScripts } from '../device-scripts/device-scripts-seed.ts';

const USAGE = `Usage: mm-server dev-board --file <path> [--name <name>] [--gpio-port <port>]

For \`pnpm start\` (scripts/dev.mjs), before the server starts: makes sure the simulated
board saved in <path> ({ id, name, token }, mode 0600) is registered, registering a new one
when it is not, straight in the database (no API token needed, whether auth is on or not).
Prints { id, name, token, reused, users } as JSON: users are the usernames of the admins
(for the startup banner's sign-in example). --gpio-port: where the simulated GPIO motor script
will listen; the catalogue's entry for it is set to that port (and said so: gpio_port_was).`;

interface SavedBoard {
  id: string;
  name: string;
  token: string;
}

async function readSaved(file: string): Promise<SavedBoard | undefined> {
  try {
    const saved = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<SavedBoard>;
    if (typeof saved.id === 'string' && typeof saved.name === 'string' && typeof saved.token === 'string') return saved as SavedBoard;
  } catch {
    // none saved yet, or unreadable: a new one
  }
  return undefined;
}

/** The catalogue's GPIO motor entry (seeded first, as the server would) names `port`; says what it named before. */
async function pointGpioEntryAt(db: Db, port: number): Promise<{ gpio_port_was?: number }> {
  await seedDeviceScripts(db);
  const entry = and(eq(deviceScripts.name, GPIO_MOTOR_SCRIPT.name), eq(deviceScripts.deviceType, GPIO_MOTOR_SCRIPT.device_type));
  const [before] = await db.select({ port: deviceScripts.port }).from(deviceScripts).where(entry);
  if (!before || before.port === port) return {};
  await db.update(deviceScripts).set({ port }).where(entry);
  return { gpio_port_was: before.port };
}

/** `mm-server dev-board`: returns the exit code (3: the embedded database is in use). */
export async function devBoardCommand(args: string[], config: Config): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { file: { type: 'string' }, name: { type: 'string', default: 'simulated-board' }, 'gpio-port': { type: 'string' } } });
  } catch (e) {
    console.error(`mm-server dev-board: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const file = parsed.values.file;
  const gpioPort = parsed.values['gpio-port'] === undefined ? undefined : Number(parsed.values['gpio-port']);
  if (gpioPort !== undefined && !(Number.isInteger(gpioPort) && gpioPort > 0 && gpioPort < 65536)) {
    console.error('mm-server dev-board: --gpio-port must be a port number.');
    return 2;
  }
  if (!file) {
    console.error(`mm-server dev-board: --file is required.\n\n${USAGE}`);
    return 2;
  }
  let lock: { release(): void } | undefined;
  try {
    if (!config.databaseUrl) lock = lockDataDir(config.dataDir);
  } catch (e) {
    if (!(e instanceof DataDirLockedError)) throw e;
    console.error(`mm-server dev-board: ${e.message}`);
    return 3;
  }
  try {
    const database = await openDatabase({ databaseUrl: config.databaseUrl, embeddedDir: path.join(config.dataDir, 'pgdata') });
    const { db } = database;
    try {
      const saved = await readSaved(file);
      const row = saved ? await findBoard(db, saved.id) : undefined;
      let board: SavedBoard & { reused: boolean };
      if (saved && row && row.tokenHash === sha256Hex(saved.token)) {
        board = { ...saved, name: row.name, reused: true };
      } else {
        const token = randomBytes(32).toString('base64url');
        // Names are unique: a board of that name made by an earlier dev run (its state file
        // gone) leaves this one `<name>-2`, `<name>-3`, …
        let created = await insertBoard(db, parsed.values.name, sha256Hex(token));
        for (let n = 2; created === 'name_taken' && n < 1000; n++) created = await insertBoard(db, `${parsed.values.name}-${n}`, sha256Hex(token));
        if (created === 'name_taken') throw new Error(`every name ${parsed.values.name}-2 … -999 is taken`);
        board = { id: created.id, name: created.name, token, reused: false };
        await fs.mkdir(path.dirname(file), { recursive: true });
        await fs.writeFile(file, `${JSON.stringify({ id: board.id, name: board.name, token }, null, 2)}\n`, { mode: 0o600 });
      }
      const gpio = gpioPort === undefined ? {} : await pointGpioEntryAt(db, gpioPort);
      const admins = await db.select({ username: users.username }).from(users).where(eq(users.role, 'admin')).orderBy(asc(users.createdAt));
      const anyUser = admins.length > 0 || (await db.select({ id: users.id }).from(users).limit(1)).length > 0;
      console.log(JSON.stringify({ ...board, ...gpio, users: admins.map((u) => u.username), auth: anyUser || Boolean(config.apiToken) }));
      return 0;
    } finally {
      await database.close();
    }
  } finally {
    lock?.release();
  }
}
