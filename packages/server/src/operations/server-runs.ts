import type { Clock } from '@mm/protocol';
import type { BoardLinks } from '../agent-link/board-links.ts';
import type { Logger } from '../logger.ts';
import { operationErrorOf, type OperationHelpers, type OperationKindRegistry } from './kinds.ts';
import type { OperationLifecycle } from './lifecycle.ts';
import type { LiveOperations } from './live-operations.ts';
import { toOperationObject, type OperationRow } from './operation-object.ts';

class ShutdownAbort extends Error {
  constructor() {
    super('the server is shutting down');
    this.name = 'ShutdownAbort';
  }
}

/** Runs registered (server-side) operation kinds while they hold their board's slot; each run is in its operation's live record. */
export class ServerRuns {
  constructor(
    private readonly ops: OperationLifecycle,
    private readonly live: LiveOperations,
    private readonly deps: { agents: BoardLinks; kinds: OperationKindRegistry; log: Logger; clock: Clock },
  ) {}

  begin(row: OperationRow): void {
    const def = this.deps.kinds.get(row.kind);
    const { agents, log } = this.deps;
    if (!def || !row.boardId) {
      this.ops.finishEventually(row.id, 'failed', null, { code: 'unknown_kind', message: `No runner for operation kind ${row.kind}.` });
      return;
    }
    const boardId = row.boardId;
    const ac = new AbortController();
    const record = this.live.open(row.id);
    if (record) record.run = ac;
    const helpers: OperationHelpers = {
      boardId,
      signal: ac.signal,
      call: (method, params, opts = {}) => agents.call(boardId, method, params, { ...opts, signal: ac.signal }),
      log: (text, stream = 'agent') => this.ops.appendLog(row.id, stream, text),
      progress: (p) => this.ops.reportProgress(row.id, p),
      expectReboot: (opts = {}) => {
        const watch = agents.expectReboot(boardId, opts);
        const aborted = new Promise<never>((_, reject) => {
          const fail = () => reject(ac.signal.reason instanceof Error ? ac.signal.reason : new Error('aborted'));
          if (ac.signal.aborted) fail();
          else ac.signal.addEventListener('abort', fail, { once: true });
        });
        aborted.catch(() => {});
        return { back: Promise.race([watch.back, aborted]) };
      },
    };
    const started = this.deps.clock.now();
    void (async () => {
      try {
        const result = await def.run({ ...toOperationObject(row), params: row.params }, helpers);
        if (this.ops.isStopping && ac.signal.aborted) return;
        if (this.ops.isCancelRequested(row.id)) {
          this.ops.finishEventually(row.id, 'cancelled', result ?? null, { code: 'cancelled', message: 'Cancelled while running.' });
        } else {
          this.ops.finishEventually(row.id, 'succeeded', result ?? null, null);
        }
      } catch (err) {
        // Left running on shutdown: the next start applies the kind's onServerRestart.
        if (ac.signal.reason instanceof ShutdownAbort) return;
        if (this.ops.isCancelRequested(row.id)) {
          this.ops.finishEventually(row.id, 'cancelled', null, { code: 'cancelled', message: 'Cancelled while running.' });
        } else {
          const { error, result } = operationErrorOf(err);
          if (error.code === 'internal_error') log.error({ err, op_id: row.id, kind: row.kind }, 'operation run failed unexpectedly');
          this.ops.finishEventually(row.id, 'failed', result, error);
        }
      } finally {
        if (record?.run === ac) record.run = undefined;
        log.debug({ op_id: row.id, kind: row.kind, ms: this.deps.clock.now() - started }, 'server-side run settled');
      }
    })();
  }

  isRunning(id: number): boolean {
    return this.live.get(id)?.run !== undefined;
  }

  /** Asks a run to stop; false if no such run is going on in this process. */
  abort(id: number): boolean {
    const ac = this.live.get(id)?.run;
    if (!ac) return false;
    ac.abort(new Error('operation cancelled'));
    return true;
  }

  abortAll(): void {
    for (const op of this.live.values()) op.run?.abort(new ShutdownAbort());
  }
}
