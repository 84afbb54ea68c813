/**
 * A TCP proxy in front of PostgreSQL that counts what the client asks, to see how many
 * statements and round trips one product operation costs (by hand, in benchmarks):
 *
 * - `statements`: Execute messages of the extended protocol plus simple Query messages;
 * - `roundTrips`: Sync messages plus simple Query messages (each waits for an answer);
 * - `texts`: the SQL of each Parse and Query, in order (what the statements were).
 *
 * Only the client → server direction is parsed; bytes pass through unchanged. It reads the
 * startup packets (SSLRequest answered by the server with 'N', then StartupMessage), then
 * typed messages: one byte of type, a 4-byte length that counts itself, the body.
 */
import net from 'node:net';

export interface PgCounts {
  statements: number;
  roundTrips: number;
  texts: string[];
  /** The SQL of each statement executed, in order (Execute resolved through Bind to its Parse; Query). */
  executed: string[];
}

export interface PgCountProxy {
  /** `url` with its host and port replaced by the proxy's. */
  url: string;
  counts(): PgCounts;
  reset(): void;
  close(): Promise<void>;
}

export async function startPgCountProxy(databaseUrl: string): Promise<PgCountProxy> {
  const target = new URL(databaseUrl);
  let counts: PgCounts = { statements: 0, roundTrips: 0, texts: [], executed: [] };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: target.hostname, port: Number(target.port || 5432) });
    sockets.add(client).add(upstream);
    let pending = Buffer.alloc(0);
    let startup = true;
    // Prepared statements of this connection (name → SQL; '' is the unnamed one) and the one bound last.
    const prepared = new Map<string, string>();
    let bound = '';
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (startup) {
          if (pending.length < 8) break;
          const len = pending.readUInt32BE(0);
          if (pending.length < len) break;
          const code = pending.readUInt32BE(4);
          pending = pending.subarray(len);
          // 196608 = protocol 3.0 StartupMessage; anything else (SSLRequest, GSSENCRequest) comes before it.
          if (code === 196608) startup = false;
          continue;
        }
        if (pending.length < 5) break;
        const type = String.fromCharCode(pending[0]!);
        const len = pending.readUInt32BE(1);
        if (pending.length < 1 + len) break;
        const body = pending.subarray(5, 1 + len);
        if (type === 'Q') {
          counts.statements++;
          counts.roundTrips++;
          const text = body.subarray(0, body.indexOf(0)).toString('utf8');
          counts.texts.push(text);
          counts.executed.push(text);
        } else if (type === 'E') {
          counts.statements++;
          counts.executed.push(prepared.get(bound) ?? '?');
        } else if (type === 'B') {
          // Bind: portal name (C string), then the statement's name (C string).
          const portalEnd = body.indexOf(0);
          bound = body.subarray(portalEnd + 1, body.indexOf(0, portalEnd + 1)).toString('utf8');
        }
        else if (type === 'S') counts.roundTrips++;
        else if (type === 'P') {
          // Parse: statement name (C string), then the query text (C string).
          const nameEnd = body.indexOf(0);
          const text = body.subarray(nameEnd + 1, body.indexOf(0, nameEnd + 1)).toString('utf8');
          counts.texts.push(text);
          prepared.set(body.subarray(0, nameEnd).toString('utf8'), text);
        }
        pending = pending.subarray(1 + len);
      }
    });
    upstream.pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    counts: () => ({ ...counts, texts: [...counts.texts], executed: [...counts.executed] }),
    reset: () => (counts = { statements: 0, roundTrips: 0, texts: [], executed: [] }),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
