import type { Clock } from '@mm/protocol';
import type { StoreContext } from '../store-context.ts';
import { addWaiting } from '../fleet/waiting-explanation.ts';
import type { OperationObject } from '../operations/operation-object.ts';

/** Operations as the API shows them: queued selector work with its `waiting` explanation (docs/fleet.md). */
export function withWaiting<T extends OperationObject>(ctx: StoreContext & { sessions: { staleMs: number }; clock: Clock }, ops: T[]): Promise<T[]> {
  // Reservations count at the server clock's now, as the scheduler keeps work off them.
  return addWaiting(ctx.database.db, ctx.sessions.staleMs, ops, new Date(ctx.clock.now()));
}
