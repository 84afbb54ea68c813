export type OperationEventType = 'status' | 'progress' | 'log' | 'end';

/** One stored event of an operation. */
export interface OperationEvent {
  /** 1, 2, 3… per operation: the SSE `id:` and what `Last-Event-ID` names. */
  seq: number;
  type: OperationEventType;
  data: unknown;
}

export interface LogEventData {
  /** `server`: the control plane's own notes (e.g. where a resumed transfer starts). */
  stream: 'stdout' | 'stderr' | 'agent' | 'server';
  data: string;
}
