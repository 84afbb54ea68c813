import { sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import type { BoardSelector } from '../boards/board-selector.ts';
import type { WaitingExplanation } from '../operations/operation-object.ts';
import { reservedForOthersSql } from '../reservations/reservation-sql.ts';

/**
 * Why queued selector work waits (docs/fleet.md, "Why work waits"): the boards its selector
 * matches, counted by what keeps each from taking it, and when the work gives up. Worked out
 * when asked (the fleet changes all the time), one query per distinct selector.
 */

interface BoardState {
  online: boolean;
  maintenance: boolean;
  bad: boolean;
  /** Held by a reservation of someone other than who asked for the work (docs/reservations.md). */
  reserved: boolean;
  busy: boolean;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function selectorText(selector: BoardSelector): string {
  return Object.entries(selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
}

/** The counts and the sentence, from the matching boards' states (pure: unit-tested). */
export function explain(selector: BoardSelector, boards: BoardState[], givesUpAt: Date | null): WaitingExplanation {
  const count = (f: (b: BoardState) => boolean) => boards.filter(f).length;
  const online = count((b) => b.online);
  const maintenance = count((b) => b.maintenance);
  const bad = count((b) => b.bad);
  const reserved = count((b) => b.reserved);
  const idle = count((b) => b.online && !b.maintenance && !b.bad && !b.reserved && !b.busy);
  // Each board once, by the first thing that keeps it: offline, maintenance, bad, reserved, busy.
  const offline = count((b) => !b.online);
  const heldMaintenance = count((b) => b.online && b.maintenance);
  const heldBad = count((b) => b.online && !b.maintenance && b.bad);
  const heldReserved = count((b) => b.online && !b.maintenance && !b.bad && b.reserved);
  const busy = count((b) => b.online && !b.maintenance && !b.bad && !b.reserved && b.busy);
  let reason: string;
  if (boards.length === 0) reason = `No board matches ${selectorText(selector) || 'the selector'}.`;
  else {
    const parts = [
      offline && `${offline} offline`,
      heldMaintenance && `${heldMaintenance} in maintenance`,
      heldBad && `${heldBad} bad`,
      heldReserved && `${heldReserved} reserved by someone else`,
      busy && `${busy} busy`,
      idle && `${idle} idle (about to take it)`,
    ].filter(Boolean);
    reason = `${plural(boards.length, 'board')} ${boards.length === 1 ? 'matches' : 'match'}: ${parts.join(', ')}.`;
  }
  return { reason, matching: boards.length, online, idle, maintenance, bad, reserved, gives_up_at: givesUpAt ? givesUpAt.toISOString() : null };
}

type Row = Record<string, unknown>;
const rowsOf = (result: unknown): Row[] => (Array.isArray(result) ? (result as Row[]) : (((result as { rows?: Row[] }).rows ?? []) as Row[]));

/**
 * The state of every registered board the selector matches (online: a fresh board session, or
 * rebooting); `reserved`: someone other than `actor` (the work's `created_by`) holds it at `at`.
 */
export async function matchingBoardStates(db: Db, selector: BoardSelector, sessionStaleMs: number, actor: string | null, at: Date): Promise<BoardState[]> {
  const fresh = sql`now() - ${Math.round(sessionStaleMs)}::int * interval '1 millisecond'`;
  const rows = rowsOf(
    await db.execute(sql`select
        exists (select 1 from board_sessions s where s.board_id = b.id and s.heartbeat_at >= ${fresh}) as online,
        b.maintenance as maintenance, b.health = 'bad' as bad,
        ${reservedForOthersSql(sql`b.id`, sql`${actor}::text`, at)} as reserved,
        exists (select 1 from operations o where o.board_id = b.id and o.status in ('queued', 'running')) as busy
      from boards b where not b.pending and b.labels @> ${JSON.stringify(selector)}::jsonb`),
  );
  const yes = (v: unknown) => v === true || v === 't';
  return rows.map((r) => ({ online: yes(r['online']), maintenance: yes(r['maintenance']), bad: yes(r['bad']), reserved: yes(r['reserved']), busy: yes(r['busy']) }));
}

/** One explanation per distinct selector (and asker: reservations hold boards for someone) of the given waiting work. */
export async function explainWaiting(
  db: Db,
  sessionStaleMs: number,
  waiting: Array<{ selector: BoardSelector; givesUpAt: Date | null; createdBy: string | null }>,
  at: Date = new Date(),
): Promise<WaitingExplanation[]> {
  const bySelector = new Map<string, Promise<BoardState[]>>();
  return Promise.all(
    waiting.map(async (w) => {
      const key = JSON.stringify([Object.entries(w.selector).sort(), w.createdBy]);
      let states = bySelector.get(key);
      if (!states) bySelector.set(key, (states = matchingBoardStates(db, w.selector, sessionStaleMs, w.createdBy, at)));
      return explain(w.selector, await states, w.givesUpAt);
    }),
  );
}

/** Fills `waiting` of queued selector work among these operations (null on the rest); `at`: the server clock's now. */
export async function addWaiting<
  T extends { id: number; status: string; board_id: string | null; board_selector: BoardSelector | null; created_by: string | null; waiting?: WaitingExplanation | null },
>(db: Db, sessionStaleMs: number, ops: T[], at: Date = new Date()): Promise<T[]> {
  const queued = ops.filter((o) => o.status === 'queued' && o.board_id === null && o.board_selector !== null);
  for (const o of ops) o.waiting = null;
  if (queued.length === 0) return ops;
  const deadlines = new Map<number, Date | null>();
  const rows = rowsOf(await db.execute(sql`select id, queue_deadline from operations where id in (${sql.join(queued.map((o) => sql`${o.id}`), sql`, `)})`));
  for (const r of rows) deadlines.set(Number(r['id']), r['queue_deadline'] ? new Date(r['queue_deadline'] as string | Date) : null);
  const explained = await explainWaiting(
    db,
    sessionStaleMs,
    queued.map((o) => ({ selector: o.board_selector!, givesUpAt: deadlines.get(o.id) ?? null, createdBy: o.created_by })),
    at,
  );
  queued.forEach((o, i) => (o.waiting = explained[i]!));
  return ops;
}
