/** `assigned`: the fleet scheduler picked the board of a selector operation (`{ board_id }`). */
export type OperationEventType = 'status' | 'progress' | 'log' | 'end' | 'assigned';

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
  /**
   * Agent output only: where this text ends in the agent's log (`op.log` offsets), so text
   * the agent sends again after a reconnect is stored once. Internal: not in the SSE events.
   */
  agent_end?: number;
}

/** A log event's data as clients see it (without the internal `agent_end`). */
export function publicEventData(type: string, data: unknown): unknown {
  if (type !== 'log' || !data || typeof data !== 'object' || !('agent_end' in data)) return data;
  const { agent_end: _internal, ...rest } = data as LogEventData;
  return rest;
}
