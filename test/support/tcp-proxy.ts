/**
 * A TCP proxy for tests that need a bad network between a client and the server: counts
 * the bytes each way, can cap the client-to-server rate, and can cut a connection once it
 * has carried a given number of bytes in one direction.
 */
import net from 'node:net';

export interface ProxyRules {
  /** Client→server bytes per second (undefined: no cap). */
  upstreamRate?: number;
  /** Cut the next connection that carries this many client→server bytes (once). */
  cutUpstreamAfter?: number;
  /** Cut the next connection that carries this many server→client bytes (once). */
  cutDownstreamAfter?: number;
}

export interface TcpProxy {
  url: string;
  port: number;
  /** Bytes carried so far, all connections. */
  readonly up: number;
  readonly down: number;
  /** Connections cut by a rule so far. */
  readonly cuts: number;
  rules: ProxyRules;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }, rules: ProxyRules = {}): Promise<TcpProxy> {
  let up = 0;
  let down = 0;
  let cuts = 0;
  const sockets = new Set<net.Socket>();
  const state = { rules };
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client);
    sockets.add(upstream);
    let connUp = 0;
    let connDown = 0;
    const cut = () => {
      cuts++;
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      up += chunk.length;
      connUp += chunk.length;
      const r = state.rules;
      if (r.cutUpstreamAfter !== undefined && connUp >= r.cutUpstreamAfter) {
        r.cutUpstreamAfter = undefined;
        cut();
        return;
      }
      const flowing = upstream.write(chunk);
      if (r.upstreamRate) {
        client.pause();
        setTimeout(() => client.resume(), (chunk.length / r.upstreamRate) * 1000);
      } else if (!flowing) {
        client.pause();
        upstream.once('drain', () => client.resume());
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      down += chunk.length;
      connDown += chunk.length;
      const r = state.rules;
      if (r.cutDownstreamAfter !== undefined && connDown >= r.cutDownstreamAfter) {
        r.cutDownstreamAfter = undefined;
        cut();
        return;
      }
      if (!client.write(chunk)) {
        upstream.pause();
        client.once('drain', () => upstream.resume());
      }
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get up() {
      return up;
    },
    get down() {
      return down;
    },
    get cuts() {
      return cuts;
    },
    get rules() {
      return state.rules;
    },
    set rules(r: ProxyRules) {
      state.rules = r;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
