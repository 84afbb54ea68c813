/**
 * A round-robin TCP balancer for tests of several control-plane replicas: each new
 * connection goes to the next target; a target that refuses (a killed replica) is skipped
 * and the next one tried, as a load balancer with health checks would.
 */
import net from 'node:net';

export interface Balancer {
  url: string;
  port: number;
  /** Which target (index) each accepted connection went to, in order. */
  readonly routed: number[];
  close(): Promise<void>;
}

export async function startBalancer(targets: Array<{ host: string; port: number }>): Promise<Balancer> {
  let next = 0;
  const routed: number[] = [];
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };

  const connectFrom = (start: number, tries: number, client: net.Socket) => {
    if (tries >= targets.length || client.destroyed) {
      client.destroy();
      return;
    }
    const index = (start + tries) % targets.length;
    const upstream = net.connect({ ...targets[index]!, noDelay: true });
    track(upstream);
    let forwarded = false;
    upstream.once('error', () => {
      // Refused (a dead replica): the next one, as long as nothing was forwarded yet.
      if (!forwarded) connectFrom(start, tries + 1, client);
      else client.destroy();
    });
    upstream.once('connect', () => {
      forwarded = true;
      routed.push(index);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.once('close', end);
      upstream.once('close', end);
      client.on('error', end);
      upstream.on('error', end);
    });
  };

  const server = net.createServer({ noDelay: true, pauseOnConnect: true }, (client) => {
    track(client);
    client.on('error', () => client.destroy());
    const start = next;
    next = (next + 1) % targets.length;
    connectFrom(start, 0, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    routed,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
