import { asc, count, eq, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { pgErrorCode } from '../db/pg-error.ts';
import { users } from '../db/schema.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { hashPassword } from './passwords.ts';
import type { Role } from './roles.ts';
import { lookupKey } from './usernames.ts';

export type UserRow = typeof users.$inferSelect;

/** The user as the API shows it (never the hash). */
export interface UserObject {
  id: string;
  username: string;
  role: Role;
  created_at: string;
}

export const toUserObject = (u: UserRow): UserObject => ({
  id: u.id,
  username: u.username,
  role: u.role as Role,
  created_at: u.createdAt.toISOString(),
});

export const userNotFound = (id: string) => new NotFoundError('user_not_found', `No user with id ${id}.`);
const lastAdmin = () => new ConflictError('last_admin', 'This is the last admin: make another admin first.');

export async function anyUserExists(db: Db): Promise<boolean> {
  const [row] = await db.select({ id: users.id }).from(users).limit(1);
  return row !== undefined;
}

export async function createUser(db: Db, username: string, password: string, role: Role): Promise<UserRow> {
  const passwordHash = await hashPassword(password);
  try {
    const [row] = await db.insert(users).values({ username, role, passwordHash }).returning();
    return row!;
  } catch (e) {
    if (pgErrorCode(e) === '23505') throw new ConflictError('username_taken', `There is already a user named ${JSON.stringify(username)}.`);
    throw e;
  }
}

export async function findUser(db: Db, id: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.id, id));
  return row;
}

/** The user a typed name means under the one rule (auth/usernames.ts), or undefined. */
export async function findUserByName(db: Db, typed: string): Promise<UserRow | undefined> {
  const key = lookupKey(typed);
  if (key === undefined) return undefined;
  // Stored names are ASCII, so lower() here is the rule's key; the typed side is already a key.
  const [row] = await db
    .select()
    .from(users)
    .where(sql`lower(${users.username}) = ${key}`);
  return row;
}

export async function listUsers(db: Db, page: { limit: number; offset: number }): Promise<{ rows: UserRow[]; total: number }> {
  const rows = await db.select().from(users).orderBy(asc(users.createdAt), asc(users.id)).limit(page.limit).offset(page.offset);
  const [t] = await db.select({ n: count() }).from(users);
  return { rows, total: Number(t?.n ?? 0) };
}

/**
 * Locks the user and every admin, in id order, in one statement: every transaction that
 * changes an admin takes these locks in the same order, so two admins demoting or deleting
 * themselves at once queue instead of deadlocking, and the second one sees the first's
 * change (the re-check drops a demoted admin) and gets 409 `last_admin`. Returns the user
 * (undefined when there is none) and how many other admins there are.
 */
async function lockUserAndAdmins(tx: Db, id: string): Promise<{ current: UserRow | undefined; otherAdmins: number }> {
  const rows = await tx
    .select()
    .from(users)
    .where(or(eq(users.id, id), eq(users.role, 'admin')))
    .orderBy(asc(users.id))
    .for('update');
  return { current: rows.find((r) => r.id === id), otherAdmins: rows.filter((r) => r.id !== id && r.role === 'admin').length };
}

export async function updateUser(db: Db, id: string, change: { role?: Role | undefined; password?: string | undefined }): Promise<UserRow> {
  const passwordHash = change.password !== undefined ? await hashPassword(change.password) : undefined;
  return db.transaction(async (tx) => {
    const { current, otherAdmins } = await lockUserAndAdmins(tx as unknown as Db, id);
    if (!current) throw userNotFound(id);
    if (current.role === 'admin' && change.role !== undefined && change.role !== 'admin' && otherAdmins === 0) throw lastAdmin();
    if (change.role === undefined && passwordHash === undefined) return current;
    const [row] = await tx
      .update(users)
      .set({
        ...(change.role !== undefined ? { role: change.role } : {}),
        ...(passwordHash !== undefined ? { passwordHash } : {}),
        updatedAt: new Date(),
      })
      .where(eq(users.id, id))
      .returning();
    return row!;
  });
}

/** Deletes the user; its tokens and sessions go with it (foreign keys cascade). */
export async function deleteUser(db: Db, id: string): Promise<UserRow> {
  return db.transaction(async (tx) => {
    const { current, otherAdmins } = await lockUserAndAdmins(tx as unknown as Db, id);
    if (!current) throw userNotFound(id);
    if (current.role === 'admin' && otherAdmins === 0) throw lastAdmin();
    await tx.delete(users).where(eq(users.id, id));
    return current;
  });
}
