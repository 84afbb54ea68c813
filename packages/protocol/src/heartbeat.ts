import type { Clock } from './clock.ts';

export interface HeartbeatOptions {
  clock: Clock;
  /** `beat()` runs this often (a WebSocket ping, an SSE comment). */
  intervalMs: number;
  beat(): void;
  /**
   * When set, `onSilent` runs once after nothing was `heard()` for this long: a half-open
   * TCP link would otherwise look alive for hours. Leave out for one-way keep-alives (SSE).
   */
  timeoutMs?: number;
  onSilent?(silentMs: number): void;
}

export interface Heartbeat {
  /** Something arrived from the peer (a message, a frame, a ping or a pong). */
  heard(): void;
  stop(): void;
}

/**
 * The one heartbeat loop of the project: link peers on both ends and the SSE channel use
 * it. Silence is checked more often than the beat so a short timeout is noticed on time.
 */
export function startHeartbeat(opts: HeartbeatOptions): Heartbeat {
  const { clock } = opts;
  let lastHeard = clock.now();
  let stopped = false;
  const beat = clock.setInterval(() => opts.beat(), opts.intervalMs);
  beat.unref();
  const timeoutMs = opts.timeoutMs;
  const check =
    timeoutMs === undefined
      ? undefined
      : clock.setInterval(
          () => {
            const silent = clock.now() - lastHeard;
            if (silent >= timeoutMs) {
              stop();
              opts.onSilent?.(silent);
            }
          },
          Math.max(5, Math.min(opts.intervalMs, timeoutMs / 4)),
        );
  check?.unref();
  function stop() {
    if (stopped) return;
    stopped = true;
    clock.clearInterval(beat);
    clock.clearInterval(check);
  }
  return {
    heard: () => {
      lastHeard = clock.now();
    },
    stop,
  };
}
