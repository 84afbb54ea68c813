import type { Clock } from './clock.ts';

/**
 * What one end of the link takes from a peer that misbehaves, kept out of LinkPeer's
 * stream code. A board that floods invalid messages and never reads its socket made the
 * server queue an error reply and write a warn line for each (hundreds of MiB held while
 * the link stayed open); these limits bound all three.
 */

/** Above this many bytes queued toward the peer, error replies are dropped (the peer is not reading them). */
export const ERROR_REPLY_QUEUE_BYTES = 1024 * 1024;
/**
 * Above this many bytes queued toward the peer, the link is closed (CloseCode.notReading):
 * data frames wait at SOCKET_HIGH_WATER_BYTES, so only a peer that stopped reading gets here.
 */
export const SEND_QUEUE_MAX_BYTES = 32 * 1024 * 1024;
/** Text of the peer's own that an error reply or a warn line repeats (its message type, a parse error) is cut to this. */
export const ERROR_TEXT_MAX_CHARS = 200;
/** Invalid messages a peer may send in a burst, and per second after it, before its link is closed. */
export const INVALID_MESSAGE_BURST = 100;
export const INVALID_MESSAGES_PER_S = 10;
/** Warn lines about one peer's bad input: at most this many per window; the rest are counted. */
export const WARN_LINES_PER_WINDOW = 10;
export const WARN_WINDOW_MS = 60_000;

export class LinkGuard {
  private invalidTokens = INVALID_MESSAGE_BURST;
  private refilledAt: number;
  private windowStart: number;
  private linesInWindow = 0;
  private suppressed = 0;

  constructor(private readonly clock: Clock) {
    this.refilledAt = clock.now();
    this.windowStart = clock.now();
  }

  /** One invalid message arrived: false once the peer has spent its budget (close the link). */
  invalidArrived(): boolean {
    const now = this.clock.now();
    this.invalidTokens = Math.min(INVALID_MESSAGE_BURST, this.invalidTokens + ((now - this.refilledAt) / 1000) * INVALID_MESSAGES_PER_S);
    this.refilledAt = now;
    this.invalidTokens -= 1;
    return this.invalidTokens >= 0;
  }

  /**
   * Whether a warn line about the peer's input may be written now. Undefined: suppress it.
   * Otherwise the number of lines suppressed since the last one written (log it with the line).
   */
  warnLine(): { suppressed: number } | undefined {
    const now = this.clock.now();
    if (now - this.windowStart >= WARN_WINDOW_MS) {
      this.windowStart = now;
      this.linesInWindow = 0;
    }
    if (this.linesInWindow >= WARN_LINES_PER_WINDOW) {
      this.suppressed++;
      return undefined;
    }
    this.linesInWindow++;
    const suppressed = this.suppressed;
    this.suppressed = 0;
    return { suppressed };
  }
}

/** `text` cut to `max` characters, saying so. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}
