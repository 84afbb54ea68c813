import type { AgentConnection, HelloMessage, OperationMessage, PullMessage } from './connection.ts';

/**
 * What the hub hands to the operations service (which implements it): the agent's
 * operation messages, the settling of a hello (what the agent still runs or has finished),
 * and the statistics of content pulls.
 */
export interface BoardWork {
  onOperationMessage(conn: AgentConnection, message: OperationMessage): Promise<void>;
  /** Awaited before the board counts as online. */
  settleHello(conn: AgentConnection, hello: HelloMessage): Promise<void>;
  /** The board started pulling a source of `size` bytes from the pull's offset. */
  onServing(boardId: string, pull: PullMessage, size: number): void;
  /** Bytes the board pulled from us, when the pull ended. */
  onServed(boardId: string, pull: PullMessage, bytes: number, ok: boolean): void;
}
