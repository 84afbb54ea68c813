import { systemClock, type AgentMessage, type Clock, type Progress, type TimerHandle } from '@mm/protocol';

/** Where reports go: the link (ServerLink), which says false while it is down. */
export interface ReportLink {
  send(message: AgentMessage): boolean;
}

/** Log text kept per operation while the link is down, beyond which the oldest goes. */
const MAX_BUFFERED_LOG_CHARS = 1024 * 1024;
/** At most this often an `op.progress` with an unchanged phase (about 4 a second). */
export const PROGRESS_INTERVAL_MS = 250;

type LogStreamName = 'stdout' | 'stderr' | 'agent';

/**
 * Live reports of one operation to the server: `op.log` and throttled `op.progress`. While
 * the link is down, log text is kept (up to 1 MiB, oldest dropped first) and the latest
 * progress remembered; `flush()` sends them once the link is back, so an operation that
 * outlives a disconnection still has its whole log on the server.
 */
export class OpReporter {
  private buffered: Array<{ stream: LogStreamName; data: string }> = [];
  private bufferedChars = 0;
  private droppedChars = 0;
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
    if (this.buffered.length === 0 && this.droppedChars === 0 && this.link.send({ type: 'op.log', op_id: this.opId, stream, data })) return;
    this.buffered.push({ stream, data });
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

  /** The link is back: send what it missed, in order. */
  flush(): void {
    if (this.droppedChars > 0) {
      if (!this.link.send({ type: 'op.log', op_id: this.opId, stream: 'agent', data: `[${this.droppedChars} characters of log dropped while the server was unreachable]\n` })) return;
      this.droppedChars = 0;
    }
    while (this.buffered.length > 0) {
      const next = this.buffered[0]!;
      if (!this.link.send({ type: 'op.log', op_id: this.opId, stream: next.stream, data: next.data })) return;
      this.buffered.shift();
      this.bufferedChars -= next.data.length;
    }
    if (this.progressUnsent) this.sendProgress();
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
