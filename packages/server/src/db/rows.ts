import type { SQL } from 'drizzle-orm';
import type { Db } from './database.ts';

/** A row of a raw query: column name → value. */
export type Row = Record<string, unknown>;

/**
 * The rows of a raw `db.execute()`: postgres-js answers an array, PGlite `{ rows }`
 * (the typed query builder needs none of this).
 */
export function rowsOf(result: unknown): Row[] {
  if (Array.isArray(result)) return result as Row[];
  return ((result as { rows?: Row[] }).rows ?? []) as Row[];
}

/** Runs a raw query and answers its rows, on either driver. */
export async function queryRows(db: Pick<Db, 'execute'>, q: SQL): Promise<Row[]> {
  return rowsOf(await db.execute(q));
}
