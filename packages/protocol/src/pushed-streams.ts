import type { Clock, TimerHandle } from './clock.ts';
import { MAX_PENDING_PUSHES, PUSH_ADOPT_TIMEOUT_MS } from './limits.ts';
import type { StreamSource } from './messages.ts';
import type { DeferredSink, StreamReceiver } from './streams.ts';

/** A stream the other side pushed (`stream.push`), held until this side adopts or declines it. */
export interface PendingPush {
  receiver: StreamReceiver;
  /** Where its frames wait until the adopter names the real sink. */
  sink: DeferredSink;
  offset: number;
  /** The adopter's byte counter, once there is one. */
  onBytes: ((bytes: number) => void) | undefined;
}

/** One key per source: a push and a pull of the same bytes meet on it. */
function sourceKey(source: StreamSource): string {
  switch (source.kind) {
    case 'content':
    case 'produced':
      return `${source.kind}:${source.sha256}`;
    case 'output':
      return `output:${source.op_id}`;
    case 'upload':
      return `upload:${source.upload_id}`;
    default:
      return `${source.kind}:${source.req_id}`;
  }
}

/**
 * The receiving side's book of one link's pushed streams: those waiting to be adopted (at
 * most MAX_PENDING_PUSHES, each given up after PUSH_ADOPT_TIMEOUT_MS in which this side
 * pulled nothing), and the sources this side pulls or has adopted a push of (a push of one
 * of those is declined: the bytes come already). The streams themselves are the link peer's.
 */
export class PushedStreams {
  private readonly waiting = new Map<string, { push: PendingPush; timer: TimerHandle }>();
  /** Open pulls (and adopted pushes) by source. */
  private readonly pulling = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  /** Why a push of `source` cannot be held now, or undefined when it can. */
  refusal(source: StreamSource): string | undefined {
    const key = sourceKey(source);
    if (this.pulling.has(key) || this.waiting.has(key)) return 'already pulling this source';
    if (this.waiting.size >= MAX_PENDING_PUSHES) return 'too many pushed streams wait';
    return undefined;
  }

  /**
   * Holds `push` for an adopter; `expired` runs if none takes it within PUSH_ADOPT_TIMEOUT_MS
   * of this side pulling nothing (a transfer still pulling an earlier file may adopt it next,
   * however long that file takes). Forgotten once its receiver settles.
   */
  hold(source: StreamSource, push: PendingPush, expired: () => void): void {
    const key = sourceKey(source);
    const arm = (): TimerHandle => {
      const timer = this.clock.setTimeout(() => {
        const held = this.waiting.get(key);
        if (held?.push !== push) return;
        if (this.pulling.size > 0) {
          held.timer = arm();
          return;
        }
        this.waiting.delete(key);
        expired();
      }, PUSH_ADOPT_TIMEOUT_MS);
      timer.unref();
      return timer;
    };
    this.waiting.set(key, { push, timer: arm() });
    const forget = () => {
      const held = this.waiting.get(key);
      if (held?.push !== push) return;
      this.clock.clearTimeout(held.timer);
      this.waiting.delete(key);
    };
    push.receiver.done.then(forget, forget);
  }

  /** The push of `source` waiting, now no longer held (undefined: none). */
  take(source: StreamSource): PendingPush | undefined {
    const key = sourceKey(source);
    const held = this.waiting.get(key);
    if (!held) return undefined;
    this.waiting.delete(key);
    this.clock.clearTimeout(held.timer);
    return held.push;
  }

  /** Counts an open pull (or adopted push) of `source` until `receiver` settles. */
  pullingUntilDone(source: StreamSource, receiver: StreamReceiver): void {
    const key = sourceKey(source);
    this.pulling.set(key, (this.pulling.get(key) ?? 0) + 1);
    const ended = () => {
      const left = (this.pulling.get(key) ?? 1) - 1;
      if (left > 0) this.pulling.set(key, left);
      else this.pulling.delete(key);
    };
    receiver.done.then(ended, ended);
  }
}
