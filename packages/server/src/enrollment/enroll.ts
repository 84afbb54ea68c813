import { randomBytes, timingSafeEqual } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { boards, type ReenrollRequest } from '../db/schema.ts';
import { pgErrorCode } from '../db/pg-error.ts';
import { UnauthorizedError } from '../errors.ts';
import { sha256Hex } from '../http/auth.ts';
import type { AuditLog } from '../auth/audit.ts';
import { enrolledBoardName, isBoardNameTaken, type BoardRow } from '../boards/board-store.ts';
import { enrollRetryAfterS, EnrollThrottledError, recordEnrollFailure } from './enroll-limiter.ts';
import { findUsableKey, takeEnrollmentPlace } from './provisioning-keys.ts';

export interface EnrollRequest {
  key: string;
  machineId: string;
  hostname: string;
  facts: Record<string, unknown> | undefined;
  /** The board's current token, when the caller has it: proof that it is that board. */
  token?: string | undefined;
  /** Where the call came from (kept with a held re-enrolment, for the admin to judge). */
  address: string | null;
}

export interface EnrollDeps {
  db: Db;
  /** Whether the board's agent is linked (online or rebooting) on any replica. */
  isLinked(boardId: string): Promise<boolean>;
  /** The server's clock (key expiry). */
  now(): Date;
}

/** How a re-enrolment proved it is the board it names. */
export type ReenrollProof = 'token' | 'approval' | 'auto_key_offline';

/**
 * A board token (a new board, or a re-enrolment that proved itself), or "pending": a manual
 * key's board not approved yet, or a re-enrolment held for an admin (`held`).
 */
export type EnrollResult =
  | { kind: 'token'; board: BoardRow; token: string; rotated: boolean; proof?: ReenrollProof }
  | { kind: 'pending'; board: BoardRow; held: boolean };

export const invalidProvisioningKey = () =>
  new UnauthorizedError('The provisioning key is not valid: unknown, expired, used up or deleted. Ask an admin for a new one.');

/** 32 random bytes, base64url: the same shape as a token `POST /api/boards/` makes. */
const newBoardToken = () => randomBytes(32).toString('base64url');

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * Exchanges a provisioning key for a board token (docs/enrollment.md). One board per key
 * and machine id. A machine id is no secret (it is readable on the board, shared by cloned
 * images, shown in the audit log), so enrolling again with one that has a board must prove
 * it is that board before the board's token is replaced (issue 46):
 * - its current token (`token`), with any key: a new token at once;
 * - an admin's approval of this re-enrolment (`POST /api/boards/<id>/approve/`), used once;
 * - with an `auto` key only: the board is not linked (a reinstalled board, its token lost;
 *   the key admits machines without a human, so it may bring its own board back).
 * Anything else is held: 202 pending, the request kept on the board for an admin, and the
 * board, its token and its link untouched. A linked board is never unseated without proof.
 * A manual key's new board stays pending, with no working token, until approved.
 */
export async function enrollBoard(deps: EnrollDeps, req: EnrollRequest): Promise<EnrollResult> {
  const { db } = deps;
  const key = await findUsableKey(db, req.key, deps.now());
  if (!key) throw invalidProvisioningKey();
  let nameTries = 0;
  for (let attempt = 0; ; attempt++) {
    const [existing] = await db
      .select()
      .from(boards)
      .where(and(eq(boards.provisioningKeyId, key.id), eq(boards.machineId, req.machineId)));
    const seen = { hostname: req.hostname, ...(req.facts ? { enrollFacts: req.facts } : {}) };
    if (existing) {
      if (existing.pending) {
        const [row] = await db.update(boards).set(seen).where(eq(boards.id, existing.id)).returning();
        return { kind: 'pending', board: row ?? existing, held: false };
      }
      const proof: ReenrollProof | undefined =
        req.token !== undefined && sameHash(sha256Hex(req.token), existing.tokenHash)
          ? 'token'
          : existing.reenroll?.approved
            ? 'approval'
            : key.approval === 'auto' && !(await deps.isLinked(existing.id))
              ? 'auto_key_offline'
              : undefined;
      if (!proof) return { kind: 'pending', board: await holdReenrollment(db, existing, req), held: true };
      const token = newBoardToken();
      // Each proof is checked again in the UPDATE: a token rotated meanwhile, or an approval
      // another call used, leaves no row, and the loop looks again.
      const still =
        proof === 'token'
          ? eq(boards.tokenHash, existing.tokenHash)
          : proof === 'approval'
            ? sql`(${boards.reenroll} ->> 'approved')::boolean`
            : undefined;
      const [row] = await db
        .update(boards)
        .set({ ...seen, tokenHash: sha256Hex(token), reenroll: null })
        .where(and(eq(boards.id, existing.id), still))
        .returning();
      if (!row) {
        if (attempt > 3) throw new Error(`the enrolment of board ${existing.id} kept racing with others`);
        continue;
      }
      return { kind: 'token', board: row, token, rotated: true, proof };
    }
    const pending = key.approval === 'manual';
    // A pending board gets the hash of a secret nobody is given: no token works for it yet.
    const token = newBoardToken();
    // Its name: the serial, or host name and machine id (enrolledBoardName); should another
    // board hold it already, `-2`, `-3`, … (a board renamed to it, or a machine enrolled
    // with a second key).
    const base = enrolledBoardName(req.hostname, req.machineId, req.facts);
    const name = nameTries === 0 ? base : `${base}-${nameTries + 1}`;
    try {
      // The place and the board in one transaction: a board that cannot be made (or another
      // request made it first) takes no place of the key's max_boards.
      const row = await db.transaction(async (tx) => {
        if (!(await takeEnrollmentPlace(tx as unknown as Db, key.id))) throw invalidProvisioningKey();
        const [made] = await tx
          .insert(boards)
          .values({ name, tokenHash: sha256Hex(token), labels: key.labels, pending, machineId: req.machineId, provisioningKeyId: key.id, enrolledFrom: req.address, ...seen })
          .returning();
        return made!;
      });
      return pending ? { kind: 'pending', board: row, held: false } : { kind: 'token', board: row, token, rotated: false };
    } catch (err) {
      if (isBoardNameTaken(err) && nameTries < 50) {
        nameTries++;
        continue;
      }
      // The same machine enrolling twice at once: the other request made the board; use it.
      if (pgErrorCode(err) !== '23505' || attempt > 3) throw err;
    }
  }
}

/** Keeps a re-enrolment that proved nothing on the board, for an admin to approve (or not). */
async function holdReenrollment(db: Db, board: BoardRow, req: EnrollRequest): Promise<BoardRow> {
  const request: ReenrollRequest = { hostname: req.hostname, address: req.address, requested_at: new Date().toISOString(), approved: false };
  // Never over an approval (a call with proof takes that one).
  const [row] = await db
    .update(boards)
    .set({ reenroll: request })
    .where(and(eq(boards.id, board.id), sql`coalesce((${boards.reenroll} ->> 'approved')::boolean, false) = false`))
    .returning();
  return row ?? board;
}

/**
 * Approves a pending board, or a board's held re-enrolment: either way the next enroll call
 * with its key and machine id gets a token, once (a pending board has none yet; its approval
 * is that one token's). Undefined: no such board.
 */
export async function approveBoard(db: Db, id: string): Promise<{ board: BoardRow; wasPending: boolean; reenroll: ReenrollRequest | null } | undefined> {
  const [before] = await db.select({ pending: boards.pending, reenroll: boards.reenroll, hostname: boards.hostname }).from(boards).where(eq(boards.id, id));
  if (!before) return undefined;
  const ticket: ReenrollRequest | null = before.pending
    ? { hostname: before.hostname ?? '', address: null, requested_at: new Date().toISOString(), approved: true }
    : before.reenroll && { ...before.reenroll, approved: true };
  const [row] = await db.update(boards).set({ pending: false, reenroll: ticket }).where(eq(boards.id, id)).returning();
  return row ? { board: row, wasPending: before.pending, reenroll: before.pending ? null : before.reenroll } : undefined;
}

export interface EnrollCall {
  ip: string;
  requestId: string | null;
}

/**
 * An enrolment as the route makes it: refused addresses wait (429, ENROLL_LIMITS); a refused
 * key is counted against its address and audited, repeated refusals from one address folded
 * into one audit entry with a count (auth/audit.ts), so a flood of guesses costs one row.
 */
export async function enrollFromAddress(deps: EnrollDeps & { audit: AuditLog }, req: EnrollRequest, call: EnrollCall): Promise<EnrollResult> {
  const detail = { hostname: req.hostname, machine_id: req.machineId };
  const retryAfter = await enrollRetryAfterS(deps.db, call.ip);
  if (retryAfter > 0) {
    await deps.audit.record({ action: 'board.enroll_throttled', target: null, actor: null, ip: call.ip, requestId: call.requestId, detail });
    throw new EnrollThrottledError(retryAfter);
  }
  try {
    return await enrollBoard(deps, req);
  } catch (err) {
    // Refused keys are worth knowing about (a leaked, expired or guessed key at work).
    if (err instanceof UnauthorizedError) {
      await recordEnrollFailure(deps.db, call.ip);
      await deps.audit.record({ action: 'board.enroll_refused', target: null, actor: null, ip: call.ip, requestId: call.requestId, detail });
    }
    throw err;
  }
}
