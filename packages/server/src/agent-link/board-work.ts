import type { BoardLink, HelloMessage, OperationMessage, PullMessage } from './board-link.ts';

/**
 * What the hub hands to the operations service (which implements it): the agent's
 * operation messages, the settling of a hello (what the agent still runs or has finished),
 * and the statistics of content pulls.
 */
export interface BoardWork {
  onOperationMessage(conn: BoardLink, message: OperationMessage): Promise<void>;
  /** Awaited before the board counts as online. */
  settleHello(conn: BoardLink, hello: HelloMessage): Promise<void>;
  /** Whether the board may pull this content: only the files of the operation it runs. */
  mayPullContent(boardId: string, sha256: string): boolean;
  /** The board started pulling a source of `size` bytes from the pull's offset. */
  onServing(boardId: string, pull: PullMessage, size: number): void;
  /** Bytes the board pulled from us (file bytes, and payload bytes on the wire: fewer when compressed), when the pull ended. */
  onServed(boardId: string, pull: PullMessage, bytes: number, ok: boolean, wireBytes?: number, pushed?: boolean): void;
}
