import type { z } from 'zod';
import { BadGatewayError, GatewayTimeoutError, ServiceUnavailableError } from '../errors.ts';
import { systemClock, type Clock, type RpcResponse, type TimerHandle } from '@mm/protocol';

type Response = z.infer<typeof RpcResponse>;

interface Pending {
  method: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: TimerHandle;
  cleanup(): void;
}

/**
 * The calling side of `rpc.request` / `rpc.response` on one connection. Failures are
 * already API errors: no answer in time → 504 `board_timeout`; `ok: false` → 502 with the
 * agent's error code; the link closing first → 503 `board_offline`.
 */
export class RpcClient {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closedWith: Error | undefined;

  constructor(
    private readonly send: (message: { type: 'rpc.request'; id: number; method: string; params: unknown }) => void,
    private readonly clock: Clock = systemClock,
  ) {}

  request(method: string, params: unknown, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (signal?.aborted) return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.pending.get(id)?.cleanup();
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      const timer = this.clock.setTimeout(() => {
        this.pending.get(id)?.cleanup();
        reject(new GatewayTimeoutError('board_timeout', `The board did not answer ${method} within ${Math.round(timeoutMs / 100) / 10} s.`));
      }, timeoutMs);
      const cleanup = () => {
        this.clock.clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.pending.delete(id);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, { method, resolve, reject, timer, cleanup });
      this.send({ type: 'rpc.request', id, method, params });
    });
  }

  /** An `rpc.response` arrived; false if no call waits for it (late or unknown id). */
  settle(response: Response): boolean {
    const p = this.pending.get(response.id);
    if (!p) return false;
    p.cleanup();
    if (response.ok) p.resolve(response.result);
    else p.reject(new BadGatewayError(response.error.code, `${p.method}: ${response.error.message}`));
    return true;
  }

  /** The link closed: every waiting call fails, and so does every later one. */
  close(): void {
    this.closedWith = new ServiceUnavailableError('board_offline', 'The board disconnected before answering.');
    for (const p of [...this.pending.values()]) {
      p.cleanup();
      p.reject(this.closedWith);
    }
  }
}
