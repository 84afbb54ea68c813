import { CloseCode, systemClock, type AgentMessage, type Clock, type CompressPolicy } from '@mm/protocol';
import type { Logger } from '../logger.ts';
import { ControlPlaneLink, type SessionEnd, type SessionHandlers } from './control-plane-link.ts';
import { fullJitterDelay, RETRY_AFTER_STATUSES, retryAfterDelay } from './backoff.ts';

export interface ServerLinkOptions {
  url: string;
  token: string;
  heartbeatIntervalMs: number;
  heartbeatTimeoutMs: number;
  /** Backoff: first ceiling and cap (full jitter below the ceiling). */
  reconnectBaseMs?: number;
  reconnectMaxDelayMs: number;
  log: Logger;
  handlers: SessionHandlers;
  /** MM_LINK_COMPRESSION=always: what the agent serves goes compressed whenever it shrinks. */
  compressPolicy?: CompressPolicy;
  /** Heartbeats and the pauses between attempts (default: the system clock). */
  clock?: Clock;
  /** The jitter's random numbers in [0, 1) (default Math.random). */
  random?: () => number;
}

/**
 * The agent's side of the link across connections: an outer loop that opens a fresh
 * connection, lets it run until it closes, waits a capped exponential backoff with full
 * jitter, and starts over, for as long as the agent runs. Whoever needs the link asks for
 * the current ready connection (`current`, `whenReady`, `send`).
 */
export class ServerLink {
  private readyConnection: ControlPlaneLink | undefined;
  private connection: ControlPlaneLink | undefined;
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;
  private waiters: Array<(c: ControlPlaneLink) => void> = [];
  private pauseNextMs = 0;
  private holdNext: Promise<void> | undefined;
  /** Number of connections that reached `welcome` (tests and logs). */
  sessions = 0;

  constructor(private readonly opts: ServerLinkOptions) {}

  /** The connection that has been welcomed, if the link is up. */
  get current(): ControlPlaneLink | undefined {
    return this.readyConnection?.isReady ? this.readyConnection : undefined;
  }

  /** Sends on the current connection; false when the link is down (nothing sent). */
  send(message: AgentMessage): boolean {
    return this.current?.sendMessage(message) ?? false;
  }

  /** Resolves with the next ready connection (at once if the link is up); rejects if `signal` aborts first. */
  whenReady(signal?: AbortSignal): Promise<ControlPlaneLink> {
    const now = this.current;
    if (now) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      const waiter = (c: ControlPlaneLink) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(c);
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Closes the link for good. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.connection?.close(CloseCode.normal, 'agent stopping');
    await this.loop;
  }

  /**
   * Closes the current connection (e.g. `rebooting`); the loop reconnects after `pauseMs`
   * at least, and not before `until` settles.
   */
  dropConnection(code: number, reason: string, opts: { pauseMs?: number; until?: Promise<void> } = {}): void {
    this.pauseNextMs = opts.pauseMs ?? 0;
    this.holdNext = opts.until;
    this.connection?.close(code, reason);
  }

  private async run(): Promise<void> {
    const log = this.opts.log;
    const clock = this.opts.clock ?? systemClock;
    const random = this.opts.random ?? Math.random;
    const base = this.opts.reconnectBaseMs ?? 500;
    let attempt = 0;
    while (!this.stopping.signal.aborted) {
      const connection = new ControlPlaneLink({
        url: this.opts.url,
        token: this.opts.token,
        heartbeatIntervalMs: this.opts.heartbeatIntervalMs,
        heartbeatTimeoutMs: this.opts.heartbeatTimeoutMs,
        log,
        clock,
        ...(this.opts.compressPolicy ? { compressPolicy: this.opts.compressPolicy } : {}),
        handlers: {
          buildHello: () => this.opts.handlers.buildHello(),
          onMessage: (m, c) => this.opts.handlers.onMessage(m, c),
          onReady: (c, welcome, hello) => {
            this.readyConnection = c;
            this.sessions++;
            this.opts.handlers.onReady(c, welcome, hello);
            const waiters = this.waiters;
            this.waiters = [];
            for (const w of waiters) w(c);
          },
        },
      });
      this.connection = connection;
      const end = await connection.ended;
      if (this.readyConnection === connection) this.readyConnection = undefined;
      this.connection = undefined;
      if (this.stopping.signal.aborted) break;

      const slow = this.describe(end);
      // A link that was up and closed for an ordinary reason starts the backoff over.
      if (end.kind === 'closed' && end.ready && !slow && end.code !== CloseCode.replaced) attempt = 0;
      let delay = fullJitterDelay(attempt, base, this.opts.reconnectMaxDelayMs, random);
      if (slow) delay = Math.max(delay, this.opts.reconnectMaxDelayMs * 2 + fullJitterDelay(attempt, base, this.opts.reconnectMaxDelayMs * 2, random));
      // A busy server (503 server_busy, database_unreachable) or a rate limit (429) says how
      // long to stay away: coming back sooner only costs it another refusal.
      if (end.kind === 'rejected' && end.retryAfterMs !== undefined && RETRY_AFTER_STATUSES.has(end.status)) {
        delay = retryAfterDelay(end.retryAfterMs, delay, this.opts.reconnectMaxDelayMs, random);
      }
      delay = Math.max(delay, this.pauseNextMs);
      this.pauseNextMs = 0;
      attempt++;
      log.info({ delay_ms: delay, attempt }, 'reconnecting after a pause');
      await clock.sleep(delay, this.stopping.signal).catch(() => {});
      const hold = this.holdNext;
      this.holdNext = undefined;
      if (hold) await hold.catch(() => {});
    }
  }

  /** Logs why the session ended; true when retrying should be slow (a state only a human can fix). */
  private describe(end: SessionEnd): boolean {
    const log = this.opts.log;
    switch (end.kind) {
      case 'unreachable':
        log.warn({ url: this.opts.url, error: end.error }, 'cannot reach the server');
        return false;
      case 'rejected':
        if (end.status === 401) {
          log.error({ url: this.opts.url, status: 401, detail: end.detail }, 'the server rejected the board token (401): check MM_BOARD_TOKEN; retrying');
        } else {
          log.warn({ url: this.opts.url, status: end.status, detail: end.detail, retry_after_ms: end.retryAfterMs }, 'the server refused the connection');
        }
        return false;
      case 'closed':
        if (end.code === CloseCode.revoked) {
          log.error({ code: end.code, reason: end.reason }, 'THE BOARD WAS DELETED OR ITS TOKEN REVOKED: this agent needs a new MM_BOARD_TOKEN; retrying slowly');
          return true;
        }
        if (end.code === CloseCode.protocolMismatch) {
          log.error({ code: end.code, reason: end.reason }, 'the server speaks another protocol version: update the agent; retrying slowly');
          return true;
        }
        if (end.code === CloseCode.replaced) {
          log.warn({ code: end.code, reason: end.reason }, 'a newer connection of this board replaced this one (is a second agent using the same token?)');
          return false;
        }
        log.warn({ code: end.code, reason: end.reason, was_ready: end.ready, heartbeat_timeout: end.heartbeatTimeout, open_ms: end.openMs }, 'link closed');
        return false;
    }
  }
}
