import type { IncomingMessage, ServerResponse } from 'node:http';

export const DEFAULT_HEARTBEAT_MS = 15_000;
/** A client that lets this much output pile up unread is cut off rather than buffered forever. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

interface Client {
  res: ServerResponse;
  lastWriteAt: number;
}

/**
 * Server-sent events to any number of clients. Every published event gets the next id;
 * a client that reconnects with `Last-Event-ID` (or a relay that saw ids from an earlier
 * run of this script) moves the counter up so ids keep increasing. There is no replay:
 * each new connection starts with a snapshot of the current state instead.
 */
export class EventStream {
  private seq = 0;
  private readonly clients = new Set<Client>();
  private readonly heartbeat: NodeJS.Timeout;

  constructor(private readonly heartbeatMs = DEFAULT_HEARTBEAT_MS) {
    // Check a few times per period so an idle client hears from us about every heartbeatMs.
    this.heartbeat = setInterval(() => this.sendHeartbeats(), Math.max(10, Math.floor(heartbeatMs / 3)));
    this.heartbeat.unref();
  }

  get lastEventId(): number {
    return this.seq;
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /** Takes over the response: headers, the reconnection delay, then `snapshot` as event `event`. */
  open(req: IncomingMessage, res: ServerResponse, event: string, snapshot: unknown): void {
    const resumeFrom = parseEventId(req.headers['last-event-id']);
    if (resumeFrom !== undefined && resumeFrom > this.seq) this.seq = resumeFrom;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const client: Client = { res, lastWriteAt: Date.now() };
    this.clients.add(client);
    // The response's close (not the request's: that one can fire once the request is
    // read) tells that the client went away.
    res.on('close', () => this.clients.delete(client));
    this.write(client, `retry: 2000\n\n${formatEvent(this.seq, event, snapshot)}`);
  }

  /** Sends an event with the next id to every client; returns that id. */
  publish(event: string, data: unknown): number {
    const id = ++this.seq;
    const text = formatEvent(id, event, data);
    for (const client of this.clients) this.write(client, text);
    return id;
  }

  /** Ends every stream (shutdown). */
  close(): void {
    clearInterval(this.heartbeat);
    for (const client of this.clients) client.res.end();
    this.clients.clear();
  }

  private sendHeartbeats(): void {
    const now = Date.now();
    for (const client of this.clients) {
      if (now - client.lastWriteAt >= this.heartbeatMs) this.write(client, `: heartbeat ${new Date(now).toISOString()}\n\n`);
    }
  }

  private write(client: Client, text: string): void {
    if (client.res.writableLength > MAX_BUFFERED_BYTES) {
      this.clients.delete(client);
      client.res.destroy();
      return;
    }
    client.res.write(text);
    client.lastWriteAt = Date.now();
  }
}

function formatEvent(id: number, event: string, data: unknown): string {
  // JSON.stringify never emits a raw newline, so the payload fits one `data:` line.
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function parseEventId(header: string | string[] | undefined): number | undefined {
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined || !/^\d{1,15}$/.test(raw.trim())) return undefined;
  return Number(raw.trim());
}
