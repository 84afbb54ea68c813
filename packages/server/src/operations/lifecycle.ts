import type { LogEventData } from './operation-event.ts';
import type { OperationError, OperationObject, OperationProgress } from './operation-object.ts';

export type FinalStatus = 'succeeded' | 'failed' | 'cancelled';

/**
 * What the two runners of operations (the agent's side, agent-operations.ts, and the
 * server-side kinds, server-runs.ts) report back to the operations service.
 */
export interface OperationLifecycle {
  /** Ends a queued or running operation (a no-op if it already ended). */
  finish(id: number, status: FinalStatus, result: unknown, error: OperationError | null): Promise<OperationObject | undefined>;
  /** `finish` retried in the background until it lands (for callers that cannot wait). */
  finishEventually(id: number, status: FinalStatus, result: unknown, error: OperationError | null): void;
  appendLog(id: number, stream: LogEventData['stream'], data: string): Promise<void>;
  /** Agent output with its offset in the agent's log: what the operation already has is not stored again. */
  appendAgentLog(id: number, stream: 'stdout' | 'stderr' | 'agent', data: string, offset: number | undefined): Promise<void>;
  /** Stored at most a few times a second (the last value always lands). */
  reportProgress(id: number, progress: OperationProgress): void;
  isCancelRequested(id: number): boolean;
  /** The server is shutting down: runs that stop now stay `running` for the next start. */
  readonly isStopping: boolean;
}
