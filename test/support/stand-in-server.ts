/** A plain HTTP server on a free loopback port, standing in for a control plane (or for something that is not one). */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandIn {
  url: string;
  close(): Promise<void>;
}

export async function standInServer(handler: http.RequestListener): Promise<StandIn> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
