import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import type { Db } from '../db/database.ts';
import { lockBoard } from '../db/board-lock.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import type { Principal } from '../auth/principal.ts';
import { ForbiddenError } from '../auth/errors.ts';
import { roleAllows } from '../auth/roles.ts';
import { auditAs } from '../auth/request-auth.ts';
import { findBoard } from '../boards/board-store.ts';
import { BadRequestError, ConflictError, NotFoundError, notFound, ValidationError } from '../errors.ts';
import { estimates, planGrants, positions, type WaitingRequest } from './reservation-queue.ts';
import { toReservationObject, type ReservationCreate, type ReservationObject, type ReservationStatus } from './reservation-object.ts';
import {
  activate,
  anyRegisteredBoardMatches,
  activeLeases,
  boardNames,
  candidateBoards,
  endOverdue,
  endReservation,
  extend,
  findReservation,
  holdsLease,
  insertReservation,
  listReservationRows,
  lockReservations,
  nextDeadline,
  stillIdle,
  waitingRows,
  type ReservationRow,
} from './reservation-store.ts';

/** How often every replica ends overdue leases and gives freed boards to waiting requests. */
export const RESERVATION_SWEEP_MS = 5_000;
/** A request waits at most this long by default (`wait_s`). */
export const DEFAULT_WAIT_S = 3600;

export const reservationNotFound = (id: unknown) => new NotFoundError('reservation_not_found', `No reservation with id ${String(id)}.`);

export interface ReservationsDeps {
  db: Db;
  bus: EventBus;
  clock?: Clock;
  log: Logger;
  /** MM_RESERVATION_MAX_S: the longest lease (and renewal) one may ask for. */
  maxDurationS: number;
  /** A board session older than this is a board gone (BoardSessions.staleMs). */
  sessionStaleMs: number;
  /** A lease began on the board: selector work given to it but not started goes back (FleetScheduler.boardChanged). */
  onGranted?: (boardId: string) => void;
  /** A lease on the board ended: selector work may go to it again (FleetScheduler.kick). */
  onFreed?: (boardId: string) => void;
}

/** Who asks: the request's principal. */
type Who = Pick<Principal, 'userId' | 'username' | 'role'>;

const sameHolder = (row: ReservationRow, who: Who) => row.username === who.username;

/**
 * Reservations (docs/reservations.md): leases on boards with a first-come-first-served
 * queue. Every replica runs one; they coordinate only through PostgreSQL. A lease ends by
 * itself at `ends_at`: every check of "is this board held" reads `ends_at` with the clock's
 * now, a timer at the next end and a sweep every RESERVATION_SWEEP_MS mark leases ended and
 * give their boards to waiting requests, and nothing of it lives only in a process.
 */
export class Reservations {
  private readonly clock: Clock;
  private sweepTimer: TimerHandle | undefined;
  private deadlineTimer: TimerHandle | undefined;
  private deadlineAt: number | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(private readonly deps: ReservationsDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  private now(): Date {
    return new Date(this.clock.now());
  }

  start(): void {
    this.unsubscribe.push(
      // A board online, or one whose work ended: a waiting request may take it.
      this.deps.bus.subscribe('board.status', undefined, ({ status }) => {
        if (status !== 'offline') this.kick();
      }),
      this.deps.bus.subscribe('operation.event', undefined, ({ event }) => {
        if (event.type === 'end') this.kick();
      }),
    );
    this.sweepTimer = this.clock.setInterval(() => this.kick(), RESERVATION_SWEEP_MS);
    this.sweepTimer.unref?.();
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const u of this.unsubscribe.splice(0)) u();
    this.clock.clearInterval(this.sweepTimer);
    this.clock.clearTimeout(this.deadlineTimer);
    await this.running;
  }

  /** Asks for a pass (one at a time; asks during one make one more). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.pass();
        } catch (err) {
          this.deps.log.warn({ err }, 'reservations: a pass failed');
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves when no pass runs (tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * One pass, in one transaction under the reservations lock: overdue leases and waits end,
   * then the waiting requests, oldest first, take the boards free for them (planGrants).
   */
  async pass(): Promise<{ granted: ReservationRow[]; ended: Array<{ id: number; boardId: string | null; reason: string }> }> {
    const at = this.now();
    const { db } = this.deps;
    const result = await db.transaction(async (tx) => {
      const t = tx as unknown as Db;
      await lockReservations(t);
      const ended = await endOverdue(t, at);
      const waiting = await waitingRows(t, at);
      const granted: ReservationRow[] = [];
      if (waiting.length) {
        const named = [...new Set(waiting.flatMap((w) => (w.boardSelector === null && w.boardId ? [w.boardId] : [])))];
        const selectors = [...new Map(waiting.flatMap((w) => (w.boardSelector ? [[JSON.stringify(w.boardSelector), w.boardSelector] as const] : []))).values()];
        const boards = await candidateBoards(t, named, selectors, this.deps.sessionStaleMs, at);
        for (const g of planGrants(waiting.map(toRequest), boards)) {
          const req = waiting.find((w) => w.id === g.requestId)!;
          const bySelector = req.boardSelector !== null;
          // The board's lock: its queue's claim and the scheduler's assignment wait for this grant.
          // Waited for, never tried: a board just released is looked at by its queue and the
          // scheduler at once (freed), and a grant that gave up on their moment's lock would
          // leave the line waiting until the next sweep. Neither holds the board's lock while
          // asking for the reservations lock, so the wait cannot deadlock.
          await lockBoard(t, g.boardId);
          if (bySelector && !(await stillIdle(t, g.boardId))) continue;
          const row = await activate(t, g.requestId, g.boardId, at);
          if (row) granted.push(row);
        }
      }
      return { granted, ended };
    });
    for (const e of result.ended) {
      this.deps.log.info({ reservation_id: e.id, board_id: e.boardId, reason: e.reason }, 'reservation ended');
      if (e.boardId && e.reason === 'expired') this.freed(e.boardId);
    }
    for (const r of result.granted) {
      this.deps.log.info({ reservation_id: r.id, board_id: r.boardId, user: r.username, ends_at: r.endsAt }, 'reservation active');
      if (r.boardId) this.deps.onGranted?.(r.boardId);
    }
    await this.armDeadline();
    return result;
  }

  /** The board is free again: its waiting work is looked at (on whichever replica holds its link), and selector work may go to it. */
  private freed(boardId: string): void {
    this.deps.bus.publish('board.work', boardId, { boardId });
    this.deps.onFreed?.(boardId);
  }

  /** A timer at the next lease end (or wait end), so a lease ends on time rather than at the next sweep. */
  private async armDeadline(): Promise<void> {
    if (this.stopped) return;
    const next = await nextDeadline(this.deps.db, this.now());
    if (next === undefined || next === this.deadlineAt) return;
    this.clock.clearTimeout(this.deadlineTimer);
    this.deadlineAt = next;
    this.deadlineTimer = this.clock.setTimeout(() => {
      this.deadlineAt = undefined;
      this.kick();
    }, Math.max(0, next - this.clock.now()));
    this.deadlineTimer.unref?.();
  }

  private checkDuration(field: string, durationS: number): void {
    if (durationS > this.deps.maxDurationS) {
      throw new ValidationError([{ field, message: `at most ${this.deps.maxDurationS} s (MM_RESERVATION_MAX_S)` }]);
    }
  }

  /** A request: active at once when its board is free (201), else waiting in its line (202). */
  async create(input: ReservationCreate, who: Who): Promise<ReservationObject> {
    const { db } = this.deps;
    if ((input.board_id === undefined) === (input.board_selector === undefined)) {
      throw new ValidationError([{ field: 'board_id', message: 'name a board (board_id) or a selector (board_selector), not both' }]);
    }
    this.checkDuration('duration_s', input.duration_s);
    const at = this.now();
    if (input.board_id !== undefined) {
      const board = await findBoard(db, input.board_id);
      if (!board || board.pending) throw notFound.board(input.board_id);
      const [lease] = await activeLeases(db, at, [input.board_id]);
      if (lease && lease.username === who.username) {
        throw new ConflictError('already_reserved', `You hold board ${input.board_id} until ${lease.endsAt!.toISOString()}: renew reservation ${lease.id} instead.`, { reservation_id: lease.id });
      }
    } else {
      const selector = input.board_selector!;
      if (!(await anyRegisteredBoardMatches(db, selector))) {
        throw new BadRequestError('no_matching_board', `No registered board matches the selector ${JSON.stringify(selector)}.`);
      }
    }
    const row = await insertReservation(db, {
      boardId: input.board_id ?? null,
      boardSelector: input.board_selector ? { ...input.board_selector } : null,
      userId: who.userId,
      username: who.username,
      note: input.note ?? '',
      durationS: input.duration_s,
      requestedAt: at,
      waitUntil: new Date(at.getTime() + (input.wait_s ?? DEFAULT_WAIT_S) * 1000),
    });
    // Its turn may be now: the pass decides (it alone grants, under its lock).
    await this.idle();
    await this.pass();
    return this.require(row.id);
  }

  async get(id: number): Promise<ReservationObject | undefined> {
    const row = await findReservation(this.deps.db, id);
    if (!row) return undefined;
    const [obj] = await this.show([row]);
    return obj;
  }

  async require(id: number): Promise<ReservationObject> {
    const r = await this.get(id);
    if (!r) throw reservationNotFound(id);
    return r;
  }

  async list(
    filters: { boardId?: string | undefined; status?: ReservationStatus | undefined; mine?: boolean | undefined },
    page: { limit: number; offset: number },
    who: Who,
  ): Promise<{ reservations: ReservationObject[]; total: number }> {
    const { rows, total } = await listReservationRows(
      this.deps.db,
      { boardId: filters.boardId, status: filters.status, ...(filters.mine ? { username: who.username } : {}) },
      page,
      this.now(),
    );
    return { reservations: await this.show(rows), total };
  }

  /** Rows as the API shows them: board names, and each waiting request's position and estimate. */
  private async show(rows: ReservationRow[]): Promise<ReservationObject[]> {
    const at = this.now();
    const names = await boardNames(this.deps.db, rows.flatMap((r) => (r.boardId ? [r.boardId] : [])));
    let pos = new Map<number, number>();
    let est = new Map<number, number | null>();
    if (rows.some((r) => r.status === 'waiting')) {
      const waiting = (await waitingRows(this.deps.db, at)).map(toRequest);
      const leases = await activeLeases(this.deps.db, at);
      pos = positions(waiting);
      est = estimates(
        waiting,
        leases.map((l) => ({ boardId: l.boardId!, labels: l.labels, endsAt: l.endsAt!.getTime() })),
        at.getTime(),
      );
    }
    return rows.map((r) =>
      toReservationObject(r, at.getTime(), { boardName: r.boardId ? (names.get(r.boardId) ?? null) : null, position: pos.get(r.id) ?? null, estimate: est.get(r.id) ?? null }),
    );
  }

  private async requireOwnOrAdmin(id: number, who: Who): Promise<ReservationRow> {
    const row = await findReservation(this.deps.db, id);
    if (!row) throw reservationNotFound(id);
    if (!sameHolder(row, who) && !roleAllows(who.role, 'admin')) {
      throw new ForbiddenError(`Reservation ${id} is ${row.username ?? 'someone else'}'s: only its holder or an admin may change it.`);
    }
    return row;
  }

  /** The lease now ends `duration_s` from now (never sooner than it did). */
  async renew(id: number, durationS: number, who: Who): Promise<ReservationObject> {
    this.checkDuration('duration_s', durationS);
    const row = await this.requireOwnOrAdmin(id, who);
    const at = this.now();
    const endsAt = new Date(Math.max(at.getTime() + durationS * 1000, row.endsAt?.getTime() ?? 0));
    const renewed = await extend(this.deps.db, id, endsAt, at);
    if (!renewed) throw new ConflictError('reservation_not_active', `Reservation ${id} is not in force (${toReservationObject(row, at.getTime()).status}): ask for a new one.`);
    this.deps.log.info({ reservation_id: id, ends_at: endsAt }, 'reservation renewed');
    await this.armDeadline();
    return this.require(id);
  }

  /** Ends a lease (`released`; `broken` when an admin ends another's, audited) or a waiting request (`cancelled`). */
  async release(id: number, who: Who): Promise<void> {
    const row = await this.requireOwnOrAdmin(id, who);
    const at = this.now();
    const shown = toReservationObject(row, at.getTime());
    if (shown.status === 'ended') return; // already over: DELETE is idempotent
    const broken = !sameHolder(row, who);
    const reason = shown.status === 'waiting' ? 'cancelled' : broken ? 'broken' : 'released';
    const ended = await endReservation(this.deps.db, id, reason, who.username, at);
    if (!ended) return;
    if (broken) auditAs('reservation.break', row.boardId ? `board ${row.boardId}` : `reservation ${id}`, { reservation_id: id, holder: row.username, reason });
    this.deps.log.info({ reservation_id: id, board_id: row.boardId, reason, by: who.username }, 'reservation ended');
    if (shown.status === 'active' && row.boardId) this.freed(row.boardId);
    // The next in line may take the board now.
    await this.idle();
    await this.pass();
  }

  /**
   * Whether this user (by id) holds a lease in force on the board (the terminal asks, docs/terminal.md).
   * Null (MM_API_TOKEN, auth off) holds nothing by id: such callers are admins anyway.
   */
  async holds(userId: string | null, boardId: string): Promise<boolean> {
    if (userId === null) return false;
    return holdsLease(this.deps.db, userId, boardId, this.now());
  }

  /** The board object's `reservation`: the lease in force on each of these boards. */
  async ofBoards(boardIds: string[]): Promise<Map<string, { id: number; user: string | null; ends_at: string }>> {
    const leases = await activeLeases(this.deps.db, this.now(), boardIds);
    return new Map(leases.map((l) => [l.boardId!, { id: l.id, user: l.username, ends_at: l.endsAt!.toISOString() }]));
  }
}

function toRequest(r: ReservationRow): WaitingRequest {
  return { id: r.id, boardId: r.boardSelector === null ? r.boardId : null, boardSelector: r.boardSelector, durationS: r.durationS };
}
