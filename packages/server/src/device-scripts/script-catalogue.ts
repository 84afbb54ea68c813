import { asc, count, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { deviceScripts } from '../db/schema.ts';
import { NotFoundError } from '../errors.ts';
import {
  DEVICE_SCRIPT_ID_PATTERN,
  type DeviceScriptChanges,
  type DeviceScriptFields,
  type DeviceScriptRecord,
} from './device-scripts-schema.ts';

type DeviceScriptRow = typeof deviceScripts.$inferSelect;

export const deviceScriptNotFound = (id: unknown) =>
  new NotFoundError('device_script_not_found', `No device script with id ${String(id)}.`);

function toRecord(row: DeviceScriptRow): DeviceScriptRecord {
  return {
    id: row.id,
    name: row.name,
    device_type: row.deviceType,
    description: row.description,
    script_filename: row.scriptFilename,
    remote_dir: row.remoteDir,
    port: row.port,
    version: row.version,
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The columns of a whole entry (create; the seed uses it too). */
export function toDeviceScriptColumns(f: DeviceScriptFields) {
  return {
    name: f.name,
    deviceType: f.device_type,
    description: f.description,
    scriptFilename: f.script_filename,
    remoteDir: f.remote_dir,
    port: f.port,
    version: f.version,
  };
}

/** The columns of the fields present (PUT passes all of them, PATCH some). */
function toColumns(fields: DeviceScriptChanges) {
  return {
    ...(fields.name !== undefined && { name: fields.name }),
    ...(fields.device_type !== undefined && { deviceType: fields.device_type }),
    ...(fields.description !== undefined && { description: fields.description }),
    ...(fields.script_filename !== undefined && { scriptFilename: fields.script_filename }),
    ...(fields.remote_dir !== undefined && { remoteDir: fields.remote_dir }),
    ...(fields.port !== undefined && { port: fields.port }),
    ...(fields.version !== undefined && { version: fields.version }),
  };
}

/**
 * Each change moves updated_at forward, even two changes within one millisecond, so a
 * client can compare two readings of an entry by it.
 */
const nextUpdatedAt = sql`greatest(now(), ${deviceScripts.updatedAt} + interval '1 millisecond')`;

export async function listDeviceScripts(
  db: Db,
  query: { deviceType?: string | undefined; limit: number; offset: number },
): Promise<{ scripts: DeviceScriptRecord[]; total: number }> {
  const where = query.deviceType === undefined ? undefined : eq(deviceScripts.deviceType, query.deviceType);
  const [{ total } = { total: 0 }] = await db.select({ total: count() }).from(deviceScripts).where(where);
  const rows = await db
    .select()
    .from(deviceScripts)
    .where(where)
    .orderBy(asc(deviceScripts.name), asc(deviceScripts.id))
    .limit(query.limit)
    .offset(query.offset);
  return { scripts: rows.map(toRecord), total };
}

/** The entry with this id; a malformed id names no entry either. Throws the resource's 404. */
export async function getDeviceScript(db: Db, id: string): Promise<DeviceScriptRecord> {
  if (!DEVICE_SCRIPT_ID_PATTERN.test(id)) throw deviceScriptNotFound(id);
  const [row] = await db.select().from(deviceScripts).where(eq(deviceScripts.id, id));
  if (!row) throw deviceScriptNotFound(id);
  return toRecord(row);
}

export async function createDeviceScript(db: Db, fields: DeviceScriptFields): Promise<DeviceScriptRecord> {
  const [row] = await db.insert(deviceScripts).values(toDeviceScriptColumns(fields)).returning();
  return toRecord(row!);
}

/** Sets the given fields (all of them for PUT, some for PATCH) and moves updated_at. */
export async function updateDeviceScript(db: Db, id: string, changes: DeviceScriptChanges): Promise<DeviceScriptRecord> {
  if (!DEVICE_SCRIPT_ID_PATTERN.test(id)) throw deviceScriptNotFound(id);
  const columns = toColumns(changes);
  // An empty patch changes nothing, so nothing is written and updated_at stays.
  if (Object.keys(columns).length === 0) return getDeviceScript(db, id);
  const [row] = await db
    .update(deviceScripts)
    .set({ ...columns, updatedAt: nextUpdatedAt })
    .where(eq(deviceScripts.id, id))
    .returning();
  if (!row) throw deviceScriptNotFound(id);
  return toRecord(row);
}

export async function deleteDeviceScript(db: Db, id: string): Promise<void> {
  if (!DEVICE_SCRIPT_ID_PATTERN.test(id)) throw deviceScriptNotFound(id);
  const deleted = await db.delete(deviceScripts).where(eq(deviceScripts.id, id)).returning({ id: deviceScripts.id });
  if (deleted.length === 0) throw deviceScriptNotFound(id);
}
