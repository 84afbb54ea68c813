import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { boards } from '../db/schema.ts';
import { pgErrorCode } from '../db/pg-error.ts';
import { UnauthorizedError } from '../errors.ts';
import { sha256Hex } from '../http/auth.ts';
import type { BoardRow } from '../agent-link/board-store.ts';
import { findUsableKey, takeEnrollmentPlace } from './provisioning-keys.ts';

export interface EnrollRequest {
  key: string;
  machineId: string;
  hostname: string;
  facts: Record<string, unknown> | undefined;
}

/** A board token (for the approved board) or "pending" (a manual key, not approved yet). */
export type EnrollResult = { kind: 'token'; board: BoardRow; token: string; rotated: boolean } | { kind: 'pending'; board: BoardRow };

export const invalidProvisioningKey = () =>
  new UnauthorizedError('The provisioning key is not valid: unknown, expired, used up or deleted. Ask an admin for a new one.');

/** 32 random bytes, base64url: the same shape as a token `POST /api/boards/` makes. */
const newBoardToken = () => randomBytes(32).toString('base64url');

/**
 * Exchanges a provisioning key for a board token (docs/enrollment.md). One board per key
 * and machine id: enrolling again gets the same board and a new token (the old one stops
 * working). A manual key's board stays pending, with no working token, until approved.
 */
export async function enrollBoard(db: Db, req: EnrollRequest): Promise<EnrollResult> {
  const key = await findUsableKey(db, req.key);
  if (!key) throw invalidProvisioningKey();
  for (let attempt = 0; ; attempt++) {
    const [existing] = await db
      .select()
      .from(boards)
      .where(and(eq(boards.provisioningKeyId, key.id), eq(boards.machineId, req.machineId)));
    const seen = { hostname: req.hostname, ...(req.facts ? { enrollFacts: req.facts } : {}) };
    if (existing) {
      if (existing.pending) {
        const [row] = await db.update(boards).set(seen).where(eq(boards.id, existing.id)).returning();
        return { kind: 'pending', board: row ?? existing };
      }
      const token = newBoardToken();
      const [row] = await db.update(boards).set({ ...seen, tokenHash: sha256Hex(token) }).where(eq(boards.id, existing.id)).returning();
      if (!row) continue; // deleted meanwhile: enroll anew
      return { kind: 'token', board: row, token, rotated: true };
    }
    if (!(await takeEnrollmentPlace(db, key.id))) throw invalidProvisioningKey();
    const pending = key.approval === 'manual';
    // A pending board gets the hash of a secret nobody is given: no token works for it yet.
    const token = newBoardToken();
    try {
      const [row] = await db
        .insert(boards)
        .values({
          name: req.hostname,
          tokenHash: sha256Hex(token),
          labels: key.labels,
          pending,
          machineId: req.machineId,
          provisioningKeyId: key.id,
          ...seen,
        })
        .returning();
      return pending ? { kind: 'pending', board: row! } : { kind: 'token', board: row!, token, rotated: false };
    } catch (err) {
      // The same machine enrolling twice at once: the other request made the board; use it.
      if (pgErrorCode(err) !== '23505' || attempt > 0) throw err;
    }
  }
}

/** Approves a pending board; its agent's next enroll call gets a token. Undefined: no such board. */
export async function approveBoard(db: Db, id: string): Promise<{ board: BoardRow; wasPending: boolean } | undefined> {
  const [before] = await db.select({ pending: boards.pending }).from(boards).where(eq(boards.id, id));
  if (!before) return undefined;
  const [row] = await db.update(boards).set({ pending: false }).where(eq(boards.id, id)).returning();
  return row ? { board: row, wasPending: before.pending } : undefined;
}
