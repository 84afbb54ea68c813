import { systemClock, type AgentMessage, type Clock, type Progress, type TimerHandle } from '@mm/protocol';

/** Where reports go: the link (ServerLink), which says false while it is down. */
export interface ReportLink {
  send(message: AgentMessage): boolean;
}

/** Log text kept per operation while the link is down, beyond which the oldest goes. */
const MAX_BUFFERED_LOG_CHARS = 1024 * 1024;
/** Log text already sent that is kept to send again after a reconnect (it may have died in flight). */
const MAX_RESENT_LOG_CHARS = 1024 * 1024;
/** At most this often an `op.progress` with an unchanged phase (about 4 a second). */
export const PROGRESS_INTERVAL_MS = 250;

type LogStreamName = 'stdout' | 'stderr' | 'agent';

interface LogChunk {
  stream: LogStreamName;
  data: string;
  /** Characters of the operation's log before this chunk. */
  offset: number;
}

/**
 * Live reports of one operation to the server: `op.log` and throttled `op.progress`. Every
 * chunk carries its offset in the operation's log. While the link is down, log text is kept
 * (up to 1 MiB, oldest dropped first) and the latest progress remembered. The last 1 MiB
 * already sent is kept too: `resume()` after a reconnect sends it again, with the same
 * offsets, before what is still unsent, because text written into a link that was already
 * dead, or received by a server that died before storing it, never arrived. The server
 * keeps only what goes past what it has, so nothing is lost and nothing doubled.
 */
export class OpReporter {
  private buffered: LogChunk[] = [];
  private bufferedChars = 0;
  private droppedChars = 0;
  /** Sent chunks kept for `resume()`, oldest first. */
  private sent: LogChunk[] = [];
  private sentChars = 0;
  /** Characters logged so far: the next chunk's offset. */
  private logged = 0;
  private lastProgress: Progress | undefined;
  private progressUnsent = false;
  private lastSentAt = 0;
  private lastSentPhase: string | undefined;
  private timer: TimerHandle | undefined;

  constructor(
    private readonly link: ReportLink,
    readonly opId: number,
    private readonly clock: Clock = systemClock,
  ) {}

  log(stream: LogStreamName, data: string): void {
    if (data.length === 0) return;
    const chunk: LogChunk = { stream, data, offset: this.logged };
    this.logged += data.length;
    if (this.buffered.length === 0 && this.droppedChars === 0 && this.sendChunk(chunk)) return;
    this.buffered.push(chunk);
    this.bufferedChars += data.length;
    while (this.bufferedChars > MAX_BUFFERED_LOG_CHARS && this.buffered.length > 1) {
      const dropped = this.buffered.shift()!;
      this.bufferedChars -= dropped.data.length;
      this.droppedChars += dropped.data.length;
    }
  }

  /** A note of the agent's own in the operation's log (one line). */
  note(line: string): void {
    this.log('agent', line.endsWith('\n') ? line : `${line}\n`);
  }

  progress(phase: string, bytesDone: number, bytesTotal: number): void {
    this.lastProgress = { phase, bytes_done: bytesDone, bytes_total: bytesTotal };
    this.progressUnsent = true;
    const now = this.clock.now();
    if (phase !== this.lastSentPhase || now - this.lastSentAt >= PROGRESS_INTERVAL_MS) {
      this.sendProgress();
    } else {
      this.timer ??= this.clock.setTimeout(() => this.sendProgress(), PROGRESS_INTERVAL_MS - (now - this.lastSentAt));
    }
  }

  /** Sends what is still unsent, in order (the link is back, or the operation ended). */
  flush(): void {
    if (this.droppedChars > 0) {
      // A note outside the log's offsets: the server stores it as it comes.
      if (!this.link.send({ type: 'op.log', op_id: this.opId, stream: 'agent', data: `[${this.droppedChars} characters of log dropped while the server was unreachable]\n` })) return;
      this.droppedChars = 0;
    }
    while (this.buffered.length > 0) {
      const next = this.buffered[0]!;
      if (!this.sendChunk(next)) return;
      this.buffered.shift();
      this.bufferedChars -= next.data.length;
    }
    if (this.progressUnsent) this.sendProgress();
  }

  /**
   * A new connection was welcomed: the kept sent text goes again (the server drops what it
   * already has), then what is unsent.
   */
  resume(): void {
    if (this.sent.length > 0) {
      this.buffered = [...this.sent, ...this.buffered];
      this.bufferedChars += this.sentChars;
      this.sent = [];
      this.sentChars = 0;
    }
    this.flush();
  }

  /** The server has the outcome: nothing needs sending again. */
  forgetSent(): void {
    this.sent = [];
    this.sentChars = 0;
  }

  private sendChunk(chunk: LogChunk): boolean {
    if (!this.link.send({ type: 'op.log', op_id: this.opId, stream: chunk.stream, data: chunk.data, offset: chunk.offset })) return false;
    this.sent.push(chunk);
    this.sentChars += chunk.data.length;
    while (this.sentChars > MAX_RESENT_LOG_CHARS && this.sent.length > 1) this.sentChars -= this.sent.shift()!.data.length;
    return true;
  }

  /** Something is still waiting for the link (log text or the latest progress). */
  get hasUnsent(): boolean {
    return this.buffered.length > 0 || this.droppedChars > 0 || this.progressUnsent;
  }

  /** The operation ended: logs go out now (or at the next flush if the link is down). */
  close(): void {
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.flush();
  }

  private sendProgress(): void {
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.lastProgress) return;
    if (this.link.send({ type: 'op.progress', op_id: this.opId, progress: this.lastProgress })) {
      this.progressUnsent = false;
      this.lastSentAt = this.clock.now();
      this.lastSentPhase = this.lastProgress.phase;
    }
  }
}
