import http from 'node:http';
import { boundaryOf, MjpegPartReader, type MjpegPart } from '../src/mjpeg-parts.ts';

/** A `/stream.mjpg` client for tests: collects parts, can pause reading (a stalled viewer). */
export interface MjpegClient {
  status: number;
  contentType: string;
  parts: MjpegPart[];
  /** Per part kept: how old its frame was when it arrived (now − X-Capture-Time), ms. */
  ages: number[];
  /** Parts received in all (also those no longer kept). */
  count(): number;
  /** Resolves once `n` parts (in all) have arrived. */
  waitParts(n: number, timeoutMs?: number): Promise<void>;
  res: http.IncomingMessage;
  close(): void;
}

/** `keep`: how many of the latest parts to hold (long-running readers in benchmarks keep few). */
export function openMjpeg(url: string, headers: Record<string, string> = {}, opts: { keep?: number; onPart?: (p: MjpegPart) => void } = {}): Promise<MjpegClient> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      const parts: MjpegPart[] = [];
      const waiters = new Set<() => void>();
      const boundary = boundaryOf(res.headers['content-type']);
      let count = 0;
      const ages: number[] = [];
      const reader = boundary
        ? new MjpegPartReader(boundary, (p) => {
            count++;
            opts.onPart?.(p);
            parts.push(p);
            ages.push(Date.now() - Number(p.headers['x-capture-time']));
            if (opts.keep !== undefined && parts.length > opts.keep) {
              parts.shift();
              ages.shift();
            }
          })
        : undefined;
      res.on('data', (chunk: Buffer) => {
        reader?.push(chunk);
        for (const w of waiters) w();
      });
      res.on('error', () => {});
      resolve({
        status: res.statusCode ?? 0,
        contentType: res.headers['content-type'] ?? '',
        parts,
        count: () => count,
        ages,
        res,
        waitParts: (n, timeoutMs = 10_000) =>
          new Promise<void>((ok, fail) => {
            const check = () => {
              if (count < n) return;
              waiters.delete(check);
              clearTimeout(t);
              ok();
            };
            const t = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`only ${count} of ${n} parts in ${timeoutMs} ms`));
            }, timeoutMs);
            waiters.add(check);
            check();
          }),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
  });
}
