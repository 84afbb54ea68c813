import { and, asc, desc, eq, gt, gte, lt, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { operationEvents } from '../db/schema.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import type { LogEventData, OperationEvent, OperationEventType } from './operation-event.ts';
import { replaceNul } from './replace-nul.ts';

export type { LogEventData, OperationEvent, OperationEventType } from './operation-event.ts';

/** Log events whose lengths are read per query when finding where a log's tail begins. */
const TAIL_PAGE_SIZE = 200;
/** Events read from the database per query (a replay or a log is read page by page). */
export const EVENT_PAGE_SIZE = 500;

interface Pending {
  type: OperationEventType;
  data: unknown;
  settle: Array<(e: OperationEvent | undefined) => void>;
}

/** Log chunks queued back to back while a write is in flight merge into one event up to this size. */
const MAX_MERGED_LOG_CHARS = 64 * 1024;

/**
 * The event history of every operation: stored in `operation_events` in order (one writer
 * per operation owns its seq counter, so events never interleave or reuse a seq), and
 * published to live subscribers only after they are stored, so a client that replays
 * from the database and then listens sees every event exactly once.
 */
export class OperationEventLog {
  private readonly writers = new Map<number, OperationWriter>();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly bus: EventBus,
  ) {}

  /** Stores the event (resolves once stored; undefined if the store failed, which is logged). */
  append(operationId: number, type: OperationEventType, data: unknown): Promise<OperationEvent | undefined> {
    return this.writerOf(operationId).enqueue(type, replaceNul(data));
  }

  private writerOf(operationId: number): OperationWriter {
    let w = this.writers.get(operationId);
    if (!w) {
      const created: OperationWriter = new OperationWriter(this.db, this.log, operationId, (event) => this.bus.publish('operation.event', operationId, { operationId, event }), () => {
        if (this.writers.get(operationId) === created) this.writers.delete(operationId);
      });
      this.writers.set(operationId, created);
      w = created;
    }
    return w;
  }

  /** A new operation's events start at seq 1: no need to look up where its log ends. */
  startNew(operationId: number): void {
    this.writerOf(operationId).knownEmpty();
  }

  /** Live events of one operation, after they are stored (`operation.event` on the bus). Returns the unsubscribe function. */
  subscribe(operationId: number, listener: (e: OperationEvent) => void): () => void {
    return this.bus.subscribe('operation.event', operationId, (m) => listener(m.event));
  }

  /** At most `limit` stored events after `afterSeq`, in order. */
  read(operationId: number, afterSeq = 0, limit = EVENT_PAGE_SIZE): Promise<OperationEvent[]> {
    return readOperationEvents(this.db, operationId, afterSeq, limit);
  }

  /**
   * Every stored event after `afterSeq`, read a page at a time; with `logFromSeq`, log events
   * before that seq are left out (in the query: their text is never read).
   */
  async *replay(operationId: number, afterSeq = 0, pageSize = EVENT_PAGE_SIZE, logFromSeq?: number): AsyncGenerator<OperationEvent> {
    let after = afterSeq;
    for (;;) {
      const page = await readOperationEvents(this.db, operationId, after, pageSize, logFromSeq);
      yield* page;
      if (page.length < pageSize) return;
      after = page.at(-1)!.seq;
    }
  }

  /** The log so far as text chunks, read a page at a time (never the whole log in memory). */
  async *logText(operationId: number, pageSize = EVENT_PAGE_SIZE): AsyncGenerator<string> {
    let after = 0;
    for (;;) {
      const rows = await this.db
        .select({ seq: operationEvents.seq, data: operationEvents.data })
        .from(operationEvents)
        .where(and(eq(operationEvents.operationId, operationId), eq(operationEvents.type, 'log'), gt(operationEvents.seq, after)))
        .orderBy(asc(operationEvents.seq))
        .limit(pageSize);
      for (const r of rows) yield (r.data as LogEventData).data;
      if (rows.length < pageSize) return;
      after = rows.at(-1)!.seq;
    }
  }

  /**
   * Where the last `bytes` (UTF-8) of the stored log begin: the first log event to send
   * (`fromSeq`), how many bytes to drop from its start (`cut`), and how many bytes of the log
   * come before (`skipped`, counting the cut). Undefined when the whole log fits. Reads the
   * lengths of the last events page by page from the end, and sums the rest in the database.
   */
  async logTail(operationId: number, bytes: number): Promise<{ fromSeq: number; cut: number; skipped: number } | undefined> {
    const length = sql<number>`octet_length(${operationEvents.data}->>'data')`.mapWith(Number);
    let before = 2 ** 31 - 1; // seq is an int4
    let kept = 0;
    for (;;) {
      const rows = await this.db
        .select({ seq: operationEvents.seq, length })
        .from(operationEvents)
        .where(and(eq(operationEvents.operationId, operationId), eq(operationEvents.type, 'log'), lt(operationEvents.seq, before)))
        .orderBy(desc(operationEvents.seq))
        .limit(TAIL_PAGE_SIZE);
      for (const r of rows) {
        if (kept + r.length < bytes) {
          kept += r.length;
          continue;
        }
        const cut = r.length - (bytes - kept);
        const [earlier] = await this.db
          .select({ total: sql<number>`coalesce(sum(octet_length(${operationEvents.data}->>'data')), 0)`.mapWith(Number) })
          .from(operationEvents)
          .where(and(eq(operationEvents.operationId, operationId), eq(operationEvents.type, 'log'), lt(operationEvents.seq, r.seq)));
        const skipped = (earlier?.total ?? 0) + cut;
        return skipped > 0 ? { fromSeq: r.seq, cut, skipped } : undefined;
      }
      if (rows.length < TAIL_PAGE_SIZE) return undefined;
      before = rows.at(-1)!.seq;
    }
  }

  /** Where the stored agent output of an operation ends in the agent's log (0 if none is stored). */
  async agentLogEnd(operationId: number): Promise<number> {
    const [row] = await this.db
      .select({ end: sql<number>`(${operationEvents.data}->>'agent_end')::bigint`.mapWith(Number) })
      .from(operationEvents)
      .where(and(eq(operationEvents.operationId, operationId), eq(operationEvents.type, 'log'), sql`(${operationEvents.data}->>'agent_end') is not null`))
      .orderBy(desc(operationEvents.seq))
      .limit(1);
    return row?.end ?? 0;
  }

  /** The whole log so far, as text (small logs, tests). */
  async text(operationId: number): Promise<string> {
    let text = '';
    for await (const chunk of this.logText(operationId)) text += chunk;
    return text;
  }

  /** Waits until every event appended so far is stored (graceful shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.writers.values()].map((w) => w.idle()));
  }
}

/** At most `limit` stored events of an operation after `afterSeq`, in order (also what other replicas read). */
export async function readOperationEvents(db: Db, operationId: number, afterSeq = 0, limit = EVENT_PAGE_SIZE, logFromSeq?: number): Promise<OperationEvent[]> {
  const rows = await db
    .select({ seq: operationEvents.seq, type: operationEvents.type, data: operationEvents.data })
    .from(operationEvents)
    .where(
      and(
        eq(operationEvents.operationId, operationId),
        gt(operationEvents.seq, afterSeq),
        logFromSeq !== undefined ? or(ne(operationEvents.type, 'log'), gte(operationEvents.seq, logFromSeq)) : undefined,
      ),
    )
    .orderBy(asc(operationEvents.seq))
    .limit(limit);
  return rows.map((r) => ({ seq: r.seq, type: r.type as OperationEventType, data: r.data }));
}

class OperationWriter {
  private nextSeq: number | undefined;
  private queue: Pending[] = [];
  private running: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly operationId: number,
    private readonly publish: (e: OperationEvent) => void,
    private readonly retire: () => void,
  ) {}

  enqueue(type: OperationEventType, data: unknown): Promise<OperationEvent | undefined> {
    return new Promise((resolve) => {
      const last = this.queue.at(-1);
      if (type === 'log' && last?.type === 'log') {
        const a = last.data as LogEventData;
        const b = data as LogEventData;
        if (a.stream === b.stream && a.data.length + b.data.length <= MAX_MERGED_LOG_CHARS) {
          const end = b.agent_end ?? a.agent_end;
          last.data = { stream: a.stream, data: a.data + b.data, ...(end !== undefined ? { agent_end: end } : {}) };
          last.settle.push(resolve);
          return;
        }
      }
      this.queue.push({ type, data, settle: [resolve] });
      this.running ??= this.drain();
    });
  }

  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  knownEmpty(): void {
    if (this.nextSeq === undefined && !this.running) this.nextSeq = 1;
  }

  private async drain(): Promise<void> {
    let ended = false;
    // Events appended in the same tick (a status and its end, assigned and running) go into one write.
    await Promise.resolve();
    try {
      while (this.queue.length) {
        const batch = this.queue;
        this.queue = [];
        ended ||= batch.some((p) => p.type === 'end');
        await this.writeBatch(batch);
      }
    } finally {
      this.running = undefined;
      // A running operation keeps its writer, and with it its next seq (no max(seq) query
      // per event); an ended one keeps none: a late event creates a fresh one.
      if (this.queue.length > 0) this.running = this.drain();
      else if (ended || this.nextSeq === undefined) this.retire();
    }
  }

  /**
   * Stores a batch in one insert; if that fails, once more after reading where the log ends
   * (a seq kept from earlier may be stale when another process appended meanwhile), then
   * each event on its own, so one event the database refuses does not take the others (a
   * status or end event above all) with it.
   */
  private async writeBatch(batch: Pending[]): Promise<void> {
    const seqWasKept = this.nextSeq !== undefined;
    if (await this.tryWrite(batch, batch.length === 1 && !seqWasKept)) return;
    if (seqWasKept && (await this.tryWrite(batch, batch.length === 1))) return;
    if (batch.length > 1) for (const p of batch) await this.tryWrite([p], true);
  }

  /** Stores the events in one insert and publishes them; false (and nothing settled unless `final`) if it failed. */
  private async tryWrite(batch: Pending[], final: boolean): Promise<boolean> {
    let events: OperationEvent[] | undefined;
    try {
      if (this.nextSeq === undefined) {
        const [row] = await this.db
          .select({ max: sql<number>`coalesce(max(${operationEvents.seq}), 0)`.mapWith(Number) })
          .from(operationEvents)
          .where(eq(operationEvents.operationId, this.operationId));
        this.nextSeq = (row?.max ?? 0) + 1;
      }
      const first = this.nextSeq;
      events = batch.map((p, i) => ({ seq: first + i, type: p.type, data: p.data }));
      await this.db
        .insert(operationEvents)
        .values(events.map((e) => ({ operationId: this.operationId, seq: e.seq, type: e.type, data: e.data })));
      this.nextSeq = first + batch.length;
    } catch (err) {
      // Typically the operation row is gone (deleted with its board's invocation): nothing to keep.
      this.nextSeq = undefined;
      if (final) {
        this.log.warn({ err, op_id: this.operationId, types: batch.map((p) => p.type) }, 'could not store operation events');
        for (const p of batch) for (const s of p.settle) s(undefined);
      }
      return false;
    }
    events.forEach((e, i) => {
      this.publish(e);
      for (const s of batch[i]!.settle) s(e);
    });
    return true;
  }
}
