import type { FileRef, TimerHandle } from '@mm/protocol';
import type { BlobWriter } from '../storage/blob-store.ts';
import type { AgentKind } from './kinds.ts';
import type { CapState } from './log-cap.ts';
import type { OperationProgress } from './operation-object.ts';

/** Progress held back between two stores (at most one a second per operation). */
export interface ProgressThrottle {
  lastStoredAt: number;
  pending: OperationProgress | undefined;
  timer: TimerHandle | undefined;
  /** The store of the last flushed value, while it is in flight (the end waits for it). */
  storing: Promise<void> | undefined;
}

/** An output video announced by `op.output`, pulled before its `op.result` (output-receiver.ts). */
export interface EarlyOutput {
  writer: BlobWriter;
  /** Settles when the pull has ended; rejects when it failed (the writer is then aborted). */
  pulled: Promise<void>;
  size: number;
  expiry: TimerHandle;
  /** What the early pull moved so far (filled in when it settles, failed or not). */
  moved: LinkBytes;
}

/** File bytes moved over the agent link, and the payload bytes that crossed it for them (fewer when compressed). */
export interface LinkBytes {
  bytes: number;
  wireBytes: number;
}

/** What the server saw of a transfer (bytes it sent, from which offsets), for the result. */
export interface TransferStats {
  bytesSent: number;
  /** Payload bytes on the wire for `bytesSent`. */
  wireBytesSent: number;
  pulls: Array<{ filename: string | null; sha256: string; offset: number; bytes: number; wire_bytes: number; complete: boolean; pushed?: boolean }>;
}

/**
 * Everything this process holds for one operation while it is live, in one record: the
 * operations service (operations.ts) drops it whole when the operation ends, so nothing of
 * it outlives the operation and `finish` has one thing to clear.
 */
export interface LiveOperation {
  readonly id: number;
  /** `transfer`/`execute` running on a board linked here: the board, and the files of its op.start. */
  agent?: { boardId: string; kind: AgentKind; invocationId: number | null; files: FileRef[] };
  /** Progress held back by the throttle. */
  progress?: ProgressThrottle;
  /** Where the agent output stored so far ends in the agent's log (`op.log` offsets). */
  agentLogEnd?: number;
  /** The MM_LOG_MAX_BYTES cap of its log. */
  log?: CapState;
  /** Asked to stop: the board (or run) has until `grace` fires to confirm. */
  cancel?: { boardId: string | null; onAgent: boolean; grace: TimerHandle };
  /** Bytes the server sent for it (transfer statistics of its result). */
  stats?: TransferStats;
  /** The outcome being settled: outcomes of one operation are handled one at a time. */
  outcome?: Promise<void>;
  /** Its output video, pulled since `op.output`. */
  earlyOutput?: EarlyOutput;
  /** Its server-side run in this process (registered kinds). */
  run?: AbortController;
}

/** Operations whose end is remembered, so late messages about them cost no database read. */
const ENDED_KEPT = 1000;

/** The live operations of this process, by id; and the ids of the last ones that ended. */
export class LiveOperations {
  private readonly records = new Map<number, LiveOperation>();
  private readonly ended = new Set<number>();

  get(id: number): LiveOperation | undefined {
    return this.records.get(id);
  }

  /** The operation's record, made if it has none; undefined once it has ended (nothing is kept for it any more). */
  open(id: number): LiveOperation | undefined {
    let record = this.records.get(id);
    if (!record && !this.ended.has(id)) {
      record = { id };
      this.records.set(id, record);
    }
    return record;
  }

  /** The agent operation running on the board, if this process knows one (the newest). */
  agentOnBoard(boardId: string): LiveOperation | undefined {
    let found: LiveOperation | undefined;
    for (const record of this.records.values()) {
      if (record.agent?.boardId === boardId && (!found || record.id > found.id)) found = record;
    }
    return found;
  }

  values(): IterableIterator<LiveOperation> {
    return this.records.values();
  }

  /** The operation ended: its record goes (returned, for the caller to let go of its timers and bytes). */
  close(id: number): LiveOperation | undefined {
    const record = this.records.get(id);
    this.records.delete(id);
    this.ended.add(id);
    if (this.ended.size > ENDED_KEPT) {
      const oldest = this.ended.values().next().value;
      if (oldest !== undefined) this.ended.delete(oldest);
    }
    return record;
  }

  hasEnded(id: number): boolean {
    return this.ended.has(id);
  }

  /** Records held now (tests: nothing leaks). */
  get size(): number {
    return this.records.size;
  }
}
