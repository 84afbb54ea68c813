import { and, eq, gt, inArray, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { contentPins } from '../db/schema.ts';
import type { Logger } from '../logger.ts';
import type { PinLedger } from './blob-pins.ts';

/**
 * A pin younger than this counts whatever its replica's state; an older one only while its
 * replica is alive (its listening connection open, see replicas/board-sessions.ts). A pin
 * spans an ingest's last step and the row that records it: seconds. The margin covers a
 * replica whose listening connection is being replaced; a replica killed while it held a pin
 * keeps that content from collection this long at most (the sweeps take it afterwards).
 */
export const PIN_TRUSTED_MS = 10 * 60_000;

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
type Querier = Pick<Db, 'select' | 'execute'> | Pick<Tx, 'select' | 'execute'>;

/**
 * Serialises, per content, the taking of a pin with a collection's decision (both under
 * `pg_advisory_xact_lock`, in their transactions): a collection that found no pin removes the
 * bytes before it commits, and a pin taken meanwhile waits for that commit; the bytes are put
 * into place only once the pin is taken. So no replica ever removes bytes another has pinned.
 */
export async function lockContentPins(tx: Querier, sha256: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`mm-content:${sha256}`}))`);
}

/**
 * Whether any replica holds a pin on the content (young, or of a live replica). Call inside the
 * collecting transaction, which must hold `lockContentPins` from here to its commit.
 * With the embedded database the table stays empty (one process: its memory has the pins).
 */
export async function pinnedByAnyReplica(tx: Querier, sha256: string): Promise<boolean> {
  const [pin] = await tx
    .select({ id: contentPins.id })
    .from(contentPins)
    .where(and(eq(contentPins.sha256, sha256), or(gt(contentPins.pinnedAt, trustedSince()), replicaAlive())))
    .limit(1);
  return pin !== undefined;
}

/**
 * The `content_pins` table as this replica's `PinLedger` (storage/blob-pins.ts): each pin the
 * blob store takes is a row, removed when the pin is released. Used with a real PostgreSQL,
 * where several replicas may share the store; pins of replicas that died go by `sweep`.
 */
export class ContentPinTable implements PinLedger {
  /** Pins released here whose row could not be removed (the database was away): tried again by `sweep`. */
  private readonly unremoved = new Set<number>();

  constructor(
    private readonly db: Db,
    readonly replicaId: string,
    private readonly log: Logger,
  ) {}

  /** Startup: rows this replica id left behind (a restart under the same MM_REPLICA_ID) go. */
  async start(): Promise<void> {
    await this.db.delete(contentPins).where(eq(contentPins.replicaId, this.replicaId));
  }

  add(sha256: string): Promise<number> {
    return this.db.transaction(async (tx) => {
      await lockContentPins(tx, sha256);
      const [row] = await tx.insert(contentPins).values({ sha256, replicaId: this.replicaId }).returning({ id: contentPins.id });
      return row!.id;
    });
  }

  async remove(id: number): Promise<void> {
    try {
      await this.db.delete(contentPins).where(eq(contentPins.id, id));
      this.unremoved.delete(id);
    } catch (err) {
      this.unremoved.add(id);
      this.log.warn({ err, pin: id }, 'could not remove a content pin; trying again at the next sweep');
    }
  }

  /**
   * Removes rows of pins released here that could not be removed then, and pins of replicas
   * that are gone (older than PIN_TRUSTED_MS, no listening connection). Resolves to how many went.
   */
  async sweep(): Promise<number> {
    let removed = 0;
    if (this.unremoved.size > 0) {
      const ids = [...this.unremoved];
      removed += (await this.db.delete(contentPins).where(inArray(contentPins.id, ids)).returning({ id: contentPins.id })).length;
      for (const id of ids) this.unremoved.delete(id);
    }
    const stale = await this.db
      .delete(contentPins)
      .where(and(sql`${contentPins.pinnedAt} <= ${trustedSince()}`, sql`not ${replicaAlive()}`))
      .returning({ id: contentPins.id });
    removed += stale.length;
    if (stale.length) this.log.info({ pins: stale.length }, 'removed content pins of replicas that are gone');
    return removed;
  }
}

function trustedSince() {
  return sql`now() - ${PIN_TRUSTED_MS}::int * interval '1 millisecond'`;
}

/** The pin's replica has its listening connection open (its application_name, see replicaAppName). */
function replicaAlive() {
  return sql`exists (select 1 from pg_stat_activity a where a.datname = current_database() and a.application_name = left('mm:' || ${contentPins.replicaId}, 63))`;
}
