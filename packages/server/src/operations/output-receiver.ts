import type { ByteSink, Clock, MessageOf, ProducedFile, StreamSource, TimerHandle } from '@mm/protocol';
import type { BoardLink } from '../agent-link/board-link.ts';
import type { Config } from '../config.ts';
import { PayloadTooLargeError } from '../errors.ts';
import type { BlobStore, BlobWriter, StoredBlob } from '../storage/blob-store.ts';
import type { EarlyOutput, LinkBytes, LiveOperation } from './live-operations.ts';

export interface OutputReceiverDeps {
  files: BlobStore;
  config: Pick<Config, 'outputPullTimeoutMs' | 'outputPullIdleMs'>;
  clock: Clock;
  /** A line of the server's own in the operation's log. */
  note(opId: number, text: string): Promise<void>;
}

/**
 * Receives an execute's output video from the agent's cache into the blob store, one way
 * for every store: the link's receiver writes its batches straight into a writer of the
 * store (hash + write as they come), which checks the sha256 and the size on commit.
 *
 * The pull starts at `op.output` (the runner exited and the agent is hashing the video),
 * so the bytes move while the board hashes; `op.result` then keeps what came when it names
 * the same content, or pulls the produced file by its sha256.
 */
export class OutputReceiver {
  constructor(private readonly deps: OutputReceiverDeps) {}

  /**
   * `op.output`: pulls the video now (source `output`) into a writer of the store;
   * `receive` keeps it once `op.result` names the same sha256 and size. Started, not
   * awaited: the link's operation messages go on meanwhile.
   */
  startEarly(conn: BoardLink, op: LiveOperation, m: MessageOf<'op.output'>): void {
    if (op.agent?.kind !== 'execute' || op.earlyOutput) return;
    const writer = this.deps.files.createWriter({ maxBytes: m.size });
    const moved = { bytes: 0, wireBytes: 0 };
    const pulled = this.pullInto(conn, m.op_id, { kind: 'output', op_id: m.op_id }, writer, m.size, moved);
    // Its failure is handled where it is awaited (receive) or when it expires.
    pulled.catch(() => {});
    // An op.result that never comes (the operation was cancelled meanwhile, the server is
    // stopping): the written bytes go after the longest an output pull may take.
    const expiry = this.deps.clock.setTimeout(() => this.drop(op), this.deps.config.outputPullTimeoutMs * 2);
    op.earlyOutput = { writer, pulled, size: m.size, expiry, moved };
  }

  /** An early output nobody will take (the operation ended without one): its bytes go. */
  drop(op: LiveOperation): void {
    const early = op.earlyOutput;
    if (!early) return;
    op.earlyOutput = undefined;
    this.deps.clock.clearTimeout(early.expiry);
    void early.pulled.then(() => early.writer.abort(), () => {});
  }

  /**
   * Pulls the produced file from the agent's cache into the store, checking its sha256 as
   * it is stored and taking at most the declared size; or keeps what an `op.output` pull
   * already received, when that is the same content. Pulled even when the store already
   * holds that hash, so an agent cannot claim another invocation's content as its output.
   * Given up after MM_OUTPUT_PULL_TIMEOUT_S in all or MM_OUTPUT_PULL_IDLE_S without a byte,
   * so a stalled agent does not hold the link's message chain. The content stays pinned
   * until it is attached or discarded. `moved` is added what both pulls moved over the link
   * (file bytes, payload bytes on the wire), failed or not.
   */
  async receive(conn: BoardLink, opId: number, op: LiveOperation | undefined, output: ProducedFile, moved?: LinkBytes): Promise<StoredBlob> {
    const early = op?.earlyOutput;
    if (op && early) {
      op.earlyOutput = undefined;
      this.deps.clock.clearTimeout(early.expiry);
      let kept: StoredBlob | undefined;
      try {
        kept = await this.keepEarly(conn, opId, early, output);
      } finally {
        // Settled by now (keepEarly awaited the early pull).
        if (moved) addMoved(moved, early.moved);
      }
      if (kept) return kept;
    }
    const writer = this.deps.files.createWriter({ expectedSha256: output.sha256, maxBytes: output.size });
    const produced = { bytes: 0, wireBytes: 0 };
    try {
      await this.pullInto(conn, opId, { kind: 'produced', sha256: output.sha256 }, writer, output.size, produced);
    } finally {
      if (moved) addMoved(moved, produced);
    }
    // commit() makes it durable, checks and stores once the pull has ended.
    return writer.commit();
  }

  /**
   * What an early pull received, stored if it is what `op.result` names (the same size,
   * hashing to the same sha256); undefined otherwise (it failed, the link dropped, the
   * runner's file changed under it), and the caller pulls `produced` by sha256 instead.
   */
  private async keepEarly(conn: BoardLink, opId: number, early: EarlyOutput, output: ProducedFile): Promise<StoredBlob | undefined> {
    const log = conn.log.child({ op_id: opId });
    const fallBack = async (why: string) => {
      await this.deps.note(opId, `the output video as first received is not usable (${why}): pulling it again by its sha256\n`);
      return undefined;
    };
    try {
      await early.pulled;
    } catch (err) {
      log.info({ err }, 'the early pull of the output failed: pulling it by its sha256');
      return fallBack(err instanceof Error ? err.message : String(err));
    }
    if (early.writer.size !== output.size) {
      log.warn({ received: early.writer.size, reported: output.size }, 'the early output differs in size from the reported one: pulling it by its sha256');
      await early.writer.abort();
      return fallBack(`${early.writer.size} bytes, the board reported ${output.size}`);
    }
    try {
      const stored = await early.writer.commit(output.sha256);
      await this.deps.note(opId, `received the output video (${stored.size} bytes) while the board was hashing it\n`);
      return stored;
    } catch (err) {
      // ContentMismatchError: the file changed while the agent hashed it. commit removed the bytes.
      log.warn({ err }, 'the early output is not the reported content: pulling it by its sha256');
      return fallBack(err instanceof Error ? err.message : String(err));
    }
  }

  /**
   * Pulls `source` from the agent into `writer` under the output pull's limits: given up
   * after MM_OUTPUT_PULL_TIMEOUT_S in all or MM_OUTPUT_PULL_IDLE_S without a byte; on any
   * failure the writer is aborted (nothing is kept).
   */
  private async pullInto(conn: BoardLink, opId: number, source: StreamSource, writer: BlobWriter, declared: number, moved: LinkBytes): Promise<void> {
    const { giveUp, armIdle, stop } = this.pullTimers(opId);
    let refused = false;
    const sink: ByteSink = {
      write: (chunk) => sink.writev!([chunk]),
      writev: (chunks) =>
        writer.writev(chunks).catch((err: unknown) => {
          if (err instanceof PayloadTooLargeError) refused = true;
          throw err;
        }),
      // The caller commits once the pull has ended.
      finish: async () => {},
      destroy: () => void writer.abort(),
    };
    armIdle();
    try {
      await conn.pull(source, sink, {
        onBytes: armIdle,
        signal: giveUp.signal,
        moved: (bytes, wireBytes) => {
          moved.bytes += bytes;
          moved.wireBytes += wireBytes;
        },
      });
    } catch (err) {
      await writer.abort();
      if (refused) throw new Error(`the board sent more than the declared ${declared} bytes`);
      if (giveUp.signal.aborted) conn.log.warn({ op_id: opId, source: source.kind }, 'output pull timed out');
      throw err;
    } finally {
      stop();
    }
  }

  /** The output pull's deadline and idle timer: `giveUp` aborts when either fires. */
  private pullTimers(opId: number): { giveUp: AbortController; armIdle: () => void; stop: () => void } {
    const { clock, config } = this.deps;
    const { outputPullTimeoutMs, outputPullIdleMs } = config;
    const giveUp = new AbortController();
    const deadline = clock.setTimeout(
      () => giveUp.abort(new Error(`the board did not send the output of operation ${opId} within ${outputPullTimeoutMs / 1000} s`)),
      outputPullTimeoutMs,
    );
    let idle: TimerHandle | undefined;
    const armIdle = () => {
      clock.clearTimeout(idle);
      idle = clock.setTimeout(() => giveUp.abort(new Error(`the board sent no output bytes for ${outputPullIdleMs / 1000} s`)), outputPullIdleMs);
    };
    const stop = () => {
      clock.clearTimeout(deadline);
      clock.clearTimeout(idle);
    };
    return { giveUp, armIdle, stop };
  }
}

function addMoved(into: LinkBytes, from: LinkBytes): void {
  into.bytes += from.bytes;
  into.wireBytes += from.wireBytes;
}
