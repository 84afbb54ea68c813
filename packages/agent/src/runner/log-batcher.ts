import { StringDecoder } from 'node:string_decoder';
import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';

export type LogStream = 'stdout' | 'stderr';

/** Largest piece of log text sent in one message (well under the link's frame limit). */
export const LOG_MESSAGE_MAX_CHARS = 64 * 1024;

/**
 * Turns a child's stdout/stderr bytes into log text messages, live but not one message per
 * write: text is gathered for `flushMs` (or until a message is full) per stream. Decoding
 * keeps a multi-byte UTF-8 character that straddles two reads whole.
 */
export class LogBatcher {
  private readonly decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  private readonly pending = { stdout: '', stderr: '' };
  private timer: TimerHandle | undefined;

  constructor(
    private readonly emit: (stream: LogStream, text: string) => void,
    private readonly flushMs = 100,
    private readonly clock: Clock = systemClock,
  ) {}

  push(stream: LogStream, chunk: Buffer): void {
    this.pending[stream] += this.decoders[stream].write(chunk);
    if (this.pending[stream].length >= LOG_MESSAGE_MAX_CHARS) this.flushStream(stream);
    else this.timer ??= this.clock.setTimeout(() => this.flush(), this.flushMs);
  }

  flush(): void {
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.flushStream('stdout');
    this.flushStream('stderr');
  }

  /** The streams ended: emit what is left, including an incomplete character as U+FFFD. */
  end(): void {
    for (const s of ['stdout', 'stderr'] as const) this.pending[s] += this.decoders[s].end();
    this.flush();
  }

  private flushStream(stream: LogStream): void {
    let text = this.pending[stream];
    this.pending[stream] = '';
    while (text.length > 0) {
      let cut = Math.min(text.length, LOG_MESSAGE_MAX_CHARS);
      // Never split a surrogate pair across two messages.
      const last = text.charCodeAt(cut - 1);
      if (cut < text.length && last >= 0xd800 && last <= 0xdbff) cut--;
      this.emit(stream, text.slice(0, cut));
      text = text.slice(cut);
    }
  }
}
