import type { Clock } from '@mm/protocol';
import type { EventBus } from '../events/event-bus.ts';
import type { StoreContext } from '../store-context.ts';
import type { LogEventData, OperationEventLog } from './event-log.ts';
import type { LiveOperation, LiveOperations } from './live-operations.ts';
import { LogCap, newCapState } from './log-cap.ts';
import type { OperationProgress } from './operation-object.ts';
import { saveProgress } from './store.ts';

/**
 * Progress is stored (the row and a `progress` event) at most once a second per operation:
 * during a transfer those writes were a tenth of the server's busy time at 4 a second.
 * Live SSE clients still get every report, from memory (bus topic `operation.progress`).
 */
const PROGRESS_INTERVAL_MS = 1000;

export interface OperationRecorderDeps extends Pick<StoreContext, 'config' | 'database' | 'log'> {
  bus: EventBus;
  events: OperationEventLog;
  live: LiveOperations;
  clock: Clock;
}

/**
 * What live operations report as they go: progress (published at once, stored at most once a
 * second) and log (within MM_LOG_MAX_BYTES, agent output once however often it is sent).
 * Its state per operation is in the operation's live record.
 */
export class OperationRecorder {
  private readonly logCap: LogCap;

  constructor(private readonly deps: OperationRecorderDeps) {
    this.logCap = new LogCap(deps.config.logMaxBytes);
  }

  /** Publishes every report live; stores progress at most every PROGRESS_INTERVAL_MS per operation (the last value always lands). */
  reportProgress(id: number, progress: OperationProgress): void {
    this.deps.bus.publish('operation.progress', id, { operationId: id, progress });
    const op = this.deps.live.open(id);
    if (!op) return; // it ended: nothing more is stored
    const throttle = (op.progress ??= { lastStoredAt: 0, pending: undefined, timer: undefined, storing: undefined });
    throttle.pending = progress;
    if (throttle.timer) return;
    const wait = throttle.lastStoredAt + PROGRESS_INTERVAL_MS - this.deps.clock.now();
    const flush = () => {
      throttle.timer = undefined;
      throttle.lastStoredAt = this.deps.clock.now();
      const p = throttle.pending;
      throttle.pending = undefined;
      if (p) throttle.storing = this.storeProgress(id, p);
    };
    if (wait <= 0) flush();
    else throttle.timer = this.deps.clock.setTimeout(flush, wait);
  }

  private async storeProgress(id: number, progress: OperationProgress): Promise<void> {
    try {
      await saveProgress(this.deps.database.db, id, progress);
      // The event says when (the dashboard's timeline shows each phase's time); the row keeps the progress alone.
      await this.deps.events.append(id, 'progress', { ...progress, at: new Date().toISOString() });
    } catch (err) {
      this.deps.log.warn({ err, op_id: id }, 'could not store progress');
    }
  }

  /**
   * The progress still held back by the throttle (stored by the caller), once a store of an
   * earlier value that is still in flight has landed (or it would land after the final row and
   * the end's operation would miss it); forgets the throttle.
   */
  async takeProgress(op: LiveOperation): Promise<OperationProgress | undefined> {
    const t = op.progress;
    if (!t) return undefined;
    op.progress = undefined;
    this.deps.clock.clearTimeout(t.timer);
    await t.storing; // storeProgress never rejects (a failure is logged)
    return t.pending;
  }

  /** Stores a log chunk, within the operation's MM_LOG_MAX_BYTES (the cut part's tail is stored when it ends). */
  async appendLog(id: number, stream: LogEventData['stream'], data: string, agentEnd?: number): Promise<void> {
    if (!data.length) return;
    const op = this.deps.live.open(id);
    // An operation that ended has no cap left to fill: a late line is stored as it is.
    const now = op ? this.logCap.admit((op.log ??= newCapState()), stream, data) : data;
    if (now.length) await this.deps.events.append(id, 'log', { stream, data: now, ...(agentEnd !== undefined ? { agent_end: agentEnd } : {}) });
  }

  /**
   * Stores agent output that carries its offset in the agent's log: after a reconnect the
   * agent sends its last text again, and only what goes past what this operation already
   * has (in memory, or stored before a restart) is kept.
   */
  async appendAgentLog(id: number, stream: 'stdout' | 'stderr' | 'agent', data: string, offset: number | undefined): Promise<void> {
    if (offset === undefined) return this.appendLog(id, stream, data);
    const known = this.deps.live.get(id)?.agentLogEnd ?? (await this.deps.events.agentLogEnd(id));
    const end = offset + data.length;
    const op = this.deps.live.open(id);
    if (end <= known) {
      if (op) op.agentLogEnd = known;
      return;
    }
    if (op) op.agentLogEnd = end;
    await this.appendLog(id, stream, offset < known ? data.slice(known - offset) : data, end);
  }

  /** Shutdown: the progress every live operation's throttle holds is stored. */
  async storeHeldProgress(): Promise<void> {
    for (const op of this.deps.live.values()) {
      const pending = await this.takeProgress(op);
      if (pending) await this.storeProgress(op.id, pending);
    }
  }

  /** The operation ended: the kept tail of a log that outgrew its cap is stored (queued before its status and end events). */
  storeLogTail(id: number, op: LiveOperation | undefined): void {
    for (const chunk of this.logCap.finish(op?.log)) void this.deps.events.append(id, 'log', chunk);
  }
}
