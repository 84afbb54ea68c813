import type { HttpBindings } from '@hono/node-server';

/** The Hono environment of every route: the raw Node request/response and the request id. */
export interface AppEnv {
  /** The raw Node request/response (streamed uploads read `c.env.incoming`). */
  Bindings: HttpBindings;
  Variables: {
    requestId: string;
  };
}
