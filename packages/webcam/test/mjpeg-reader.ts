import http from 'node:http';
import { boundaryOf, MjpegPartReader, type MjpegPart } from '../src/mjpeg-parts.ts';

/** A `/stream.mjpg` client for tests: collects parts, can pause reading (a stalled viewer). */
export interface MjpegClient {
  status: number;
  contentType: string;
  parts: MjpegPart[];
  /** Resolves once `n` parts (in all) have arrived. */
  waitParts(n: number, timeoutMs?: number): Promise<void>;
  res: http.IncomingMessage;
  close(): void;
}

export function openMjpeg(url: string, headers: Record<string, string> = {}): Promise<MjpegClient> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      const parts: MjpegPart[] = [];
      const waiters = new Set<() => void>();
      const boundary = boundaryOf(res.headers['content-type']);
      const reader = boundary ? new MjpegPartReader(boundary, (p) => parts.push(p)) : undefined;
      res.on('data', (chunk: Buffer) => {
        reader?.push(chunk);
        for (const w of waiters) w();
      });
      res.on('error', () => {});
      resolve({
        status: res.statusCode ?? 0,
        contentType: res.headers['content-type'] ?? '',
        parts,
        res,
        waitParts: (n, timeoutMs = 10_000) =>
          new Promise<void>((ok, fail) => {
            const check = () => {
              if (parts.length < n) return;
              waiters.delete(check);
              clearTimeout(t);
              ok();
            };
            const t = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`only ${parts.length} of ${n} parts in ${timeoutMs} ms`));
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
