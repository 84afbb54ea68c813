import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { boardReboots, boards, boardSessions, webhookBoardState } from '../db/schema.ts';

/**
 * The board events (docs/webhooks.md): `board.enrolled`, `board.health_changed` and
 * `board.offline` come from comparing each board with what the sweep last saw of it
 * (`webhook_board_state`), not from messages: whatever changed a board (an enrolment, an
 * approval, a health check, a power recovery, a replica that died with the board's link),
 * the next sweep of any replica notices it. Each change that is an event is claimed by a
 * conditional UPDATE of the board's state row and its event is stored in that same
 * transaction, so it is told once across replicas and never lost to a replica dying halfway.
 * What is no event (a board seen for the first time while nobody wants `board.enrolled`, a
 * new hello, a board back online, the moment it was first seen offline) is brought up to
 * date for all boards at once, a few statements per sweep however many boards reconnect.
 */

export interface BoardFacts {
  id: string;
  name: string;
  labels: Record<string, string>;
  health: string;
  health_reason: string | null;
}

export type BoardEventType = 'board.enrolled' | 'board.health_changed' | 'board.offline';
export type BoardEventSink = (tx: Db, type: BoardEventType, data: Record<string, unknown>, key: string) => Promise<unknown>;

export interface BoardSweepOptions {
  /** A board session whose heartbeat is older than this is a board gone (BoardSessions.staleMs). */
  sessionStaleMs: number;
  /** Offline this long → `board.offline`. */
  offlineGraceMs: number;
  /** Whether some enabled subscription wants the event (new boards are taken in bulk when nobody wants `board.enrolled`). */
  wants: (type: BoardEventType) => boolean;
}

const seconds = (ms: number) => sql`make_interval(secs => ${ms / 1000})`;

/** One pass: brings the state rows up to date and stores the events of what changed; returns how many events it stored. */
export async function sweepBoards(db: Db, opts: BoardSweepOptions, emit: BoardEventSink): Promise<number> {
  const fresh = sql`now() - ${seconds(opts.sessionStaleMs)}`;
  const linked = sql`coalesce(${boardSessions.heartbeatAt} >= ${fresh}, false)`;
  const rebooting = sql`exists (select 1 from ${boardReboots} where ${boardReboots.boardId} = ${boards.id} and ${boardReboots.expiresAt} > now())`;
  // Offline and worth telling: enrolled, was ever linked, not expected back from a reboot.
  const watchable = sql`not ${boards.pending} and ${boards.lastSeenAt} is not null and not ${linked} and not ${rebooting}`;
  const known = sql`exists (select 1 from ${webhookBoardState} w where w.board_id = ${boards.id})`;

  // 1. Boards seen for the first time: known from now on (offline ones as already told). An
  //    enrolled one is news when someone wants it: those go one by one below.
  await db.execute(sql`insert into ${webhookBoardState} (board_id, pending, health, connected_at, offline_notified)
    select ${boards.id}, ${boards.pending}, ${boards.health}, ${boards.connectedAt}, not ${linked}
    from ${boards} left join ${boardSessions} on ${boardSessions.boardId} = ${boards.id}
    where not ${known} ${opts.wants('board.enrolled') ? sql`and ${boards.pending}` : sql``}
    on conflict (board_id) do nothing`);
  // 2. A hello since the last look (however brief): whatever it was before is over.
  await db.execute(sql`update ${webhookBoardState} s set connected_at = b.connected_at, offline_since = null, offline_notified = false, updated_at = now()
    from ${boards} b where b.id = s.board_id and s.connected_at is distinct from b.connected_at`);
  // 3. Linked now: not offline.
  await db.execute(sql`update ${webhookBoardState} s set offline_since = null, offline_notified = false, updated_at = now()
    from ${boardSessions} ss where ss.board_id = s.board_id and ss.heartbeat_at >= ${fresh} and (s.offline_since is not null or s.offline_notified)`);
  // 4. Seen offline for the first time: since its last heartbeat or the close of its link, unless
  //    that is long past (a replica that died leaves only the hello's time): then about now.
  await db.execute(sql`update ${webhookBoardState} s
    set offline_since = greatest(coalesce(${boardSessions.heartbeatAt}, ${boards.lastSeenAt}, now()), now() - interval '60 seconds'), updated_at = now()
    from ${boards} left join ${boardSessions} on ${boardSessions.boardId} = ${boards.id}
    where ${boards.id} = s.board_id and s.offline_since is null and not s.offline_notified and ${watchable}`);

  // 5. What is an event: one board at a time, each claimed by a conditional UPDATE.
  const rows = await db
    .select({
      id: boards.id,
      name: boards.name,
      labels: boards.labels,
      pending: boards.pending,
      health: boards.health,
      healthReason: boards.healthReason,
      hostname: boards.hostname,
      provisioningKeyId: boards.provisioningKeyId,
      connectedAt: boards.connectedAt,
      linked: sql<boolean>`${linked}`,
      overGrace: sql<boolean>`coalesce(${webhookBoardState.offlineSince} <= now() - ${seconds(opts.offlineGraceMs)}, false) and ${watchable}`,
      known: sql<boolean>`${webhookBoardState.boardId} is not null`,
      wasPending: webhookBoardState.pending,
      wasHealth: webhookBoardState.health,
    })
    .from(boards)
    .leftJoin(boardSessions, eq(boardSessions.boardId, boards.id))
    .leftJoin(webhookBoardState, eq(webhookBoardState.boardId, boards.id))
    .where(
      sql`${webhookBoardState.boardId} is null
        or ${webhookBoardState.pending} <> ${boards.pending}
        or ${webhookBoardState.health} <> ${boards.health}
        or (not ${webhookBoardState.offlineNotified} and ${webhookBoardState.offlineSince} <= now() - ${seconds(opts.offlineGraceMs)} and ${watchable})`,
    )
    .limit(500);

  let stored = 0;
  for (const r of rows) {
    const board: BoardFacts = { id: r.id, name: r.name, labels: r.labels, health: r.health, health_reason: r.healthReason };
    const enrolled = { board, hostname: r.hostname, provisioning_key_id: r.provisioningKeyId };
    await db.transaction(async (txn) => {
      const tx = txn as unknown as Db;
      const told = async (type: BoardEventType, data: Record<string, unknown>, key: string) => {
        if (await emit(tx, type, data, key)) stored++;
      };
      if (!r.known) {
        const [added] = await tx
          .insert(webhookBoardState)
          .values({ boardId: r.id, pending: r.pending, health: r.health, connectedAt: r.connectedAt, offlineSince: null, offlineNotified: !r.linked })
          .onConflictDoNothing()
          .returning({ id: webhookBoardState.boardId });
        if (added && !r.pending) await told('board.enrolled', enrolled, `board.enrolled:${r.id}`);
        return;
      }
      if (r.wasPending !== r.pending) {
        const [changed] = await tx
          .update(webhookBoardState)
          .set({ pending: r.pending, updatedAt: sql`now()` })
          .where(and(eq(webhookBoardState.boardId, r.id), eq(webhookBoardState.pending, r.wasPending!)))
          .returning({ id: webhookBoardState.boardId });
        // Approved (pending → enrolled).
        if (changed && r.wasPending && !r.pending) await told('board.enrolled', enrolled, `board.enrolled:${r.id}`);
      }
      if (r.wasHealth !== r.health) {
        const [changed] = await tx
          .update(webhookBoardState)
          .set({ health: r.health, updatedAt: sql`now()` })
          .where(and(eq(webhookBoardState.boardId, r.id), eq(webhookBoardState.health, r.wasHealth!)))
          .returning({ at: webhookBoardState.updatedAt });
        if (changed) {
          await told(
            'board.health_changed',
            { board, health: r.health, previous_health: r.wasHealth, reason: r.healthReason },
            `board.health_changed:${r.id}:${new Date(changed.at).getTime()}`,
          );
        }
      }
      if (r.overGrace) {
        const [claimed] = await tx
          .update(webhookBoardState)
          .set({ offlineNotified: true, updatedAt: sql`now()` })
          .where(and(eq(webhookBoardState.boardId, r.id), eq(webhookBoardState.offlineNotified, false), sql`${webhookBoardState.offlineSince} is not null`))
          .returning({ since: webhookBoardState.offlineSince });
        if (claimed?.since) {
          const since = new Date(claimed.since);
          await told('board.offline', { board, offline_since: since.toISOString(), grace_s: Math.round(opts.offlineGraceMs / 1000) }, `board.offline:${r.id}:${since.getTime()}`);
        }
      }
    });
  }
  return stored;
}
