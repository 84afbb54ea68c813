import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request the receiver got. */
export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
  /** The sender's port (its socket's local port). */
  remotePort: number;
}

/** How the receiver answers one request: a status (with headers and a body), or never (`hang`). */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/**
 * A real HTTP server on loopback that webhooks are sent to in tests: it records every request
 * and answers per path from a planned list (then `200`), so a test can make it fail, redirect,
 * say 410 or hang.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly plans = new Map<string, Answer[]>();
  private readonly sockets = new Set<Socket>();
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    let receiver!: WebhookReceiver;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => receiver.handle(req, res, Buffer.concat(chunks).toString('utf8')));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new WebhookReceiver(server, (server.address() as AddressInfo).port);
    server.on('connection', (s) => {
      receiver.sockets.add(s);
      s.on('close', () => receiver.sockets.delete(s));
    });
    return receiver;
  }

  /** `http://127.0.0.1:<port><path>` */
  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The next requests to `path` get these answers, in order. */
  plan(path: string, ...answers: Answer[]): void {
    this.plans.set(path, [...(this.plans.get(path) ?? []), ...answers]);
  }

  on(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Resolves once `path` got `n` requests (or throws after `timeoutMs`). */
  async waitFor(path: string, n: number, timeoutMs = 30_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.on(path).length < n) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`the receiver got ${this.on(path).length} of ${n} requests to ${path} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const w = () => {
          this.waiters.delete(w);
          clearTimeout(t);
          resolve();
        };
        const t = setTimeout(w, Math.min(left, 250));
        this.waiters.add(w);
      });
    }
    return this.on(path);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, body: string): void {
    const path = req.url ?? '/';
    this.received.push({ path, headers: req.headers, body, at: Date.now(), remotePort: req.socket.remotePort ?? 0 });
    for (const w of [...this.waiters]) w();
    const answer = this.plans.get(path)?.shift() ?? { status: 200, body: 'ok' };
    if (answer === 'hang') return;
    res.writeHead(answer.status, answer.headers ?? {});
    res.end(answer.body ?? '');
  }
}
