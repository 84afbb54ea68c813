import type { EventBus, ReplayedTopic } from '../events/event-bus.ts';
import type { Db } from '../db/database.ts';
import { readOperationEvents } from './event-log.ts';
import type { OperationEvent } from './operation-event.ts';
import type { OperationObject, OperationProgress } from './operation-object.ts';

/** The operations' topics on the event bus (the bus itself knows no operation type). */
declare module '../events/event-bus.ts' {
  interface BusMessages {
    /** Published once the event is stored, so replay-then-listen sees each event exactly once. */
    'operation.event': { operationId: number; event: OperationEvent };
    /**
     * Every progress report of a running operation, as it arrives, for the live SSE clients
     * of this process: not stored (the stored `progress` events are at most one a second),
     * so a replica that does not get these still sends its clients the stored ones.
     */
    'operation.progress': { operationId: number; progress: OperationProgress };
    /** A running operation was asked to stop (cancel_requested is stored): its runner sends op.cancel. */
    'operation.cancel': { operationId: number; boardId: string | null };
  }
}

/**
 * `operation.event` is a stored topic: its messages are rows of `operation_events`, so a
 * bus shared over PostgreSQL sends their operation id and seq range and the other replicas
 * read the rows back (pg-event-bus.ts).
 */
export function operationEventReplay(db: Db): ReplayedTopic<'operation.event'> {
  return {
    topic: 'operation.event',
    seqOf: (m) => m.event.seq,
    async read(operationId, afterSeq, limit) {
      const events = await readOperationEvents(db, operationId, afterSeq, limit);
      return events.map((event) => ({ operationId, event }));
    },
  };
}

/**
 * Calls `ended` with each operation that ends on this replica (its `end` event; another
 * replica's events reach only the subscribers of that operation). Returns the unsubscribe.
 */
export function onOperationEnded(bus: EventBus, ended: (op: Pick<OperationObject, 'kind' | 'status'>) => void): () => void {
  return bus.subscribe('operation.event', undefined, ({ event }) => {
    if (event.type === 'end') ended(event.data as OperationObject);
  });
}
