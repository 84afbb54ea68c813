import { client, unwrap } from '../api/client.ts';

/** A request to a device script's own route through the server's relay. */
export interface RelayRequest {
  /** The script's route, e.g. `motor/forward` or `state`. */
  path: string;
  query?: Record<string, string>;
  /** A JSON body for POST. */
  body?: unknown;
}

/** Sends relayed requests to one script on one board: its answer is the script's own (unknown JSON). */
export type Relay = (method: 'GET' | 'POST', req: RelayRequest) => Promise<unknown>;

/** The relay of script `id`, naming `boardId` when there is one to name (several boards). */
export function relayTo(id: string, boardId: string | undefined): Relay {
  return (method, { path, query = {}, body }) => {
    const params = { path: { id, path }, query: { ...query, ...(boardId ? { board_id: boardId } : {}) } };
    const url = '/api/device-scripts/{id}/proxy/{path}' as const;
    return unwrap(method === 'GET' ? client.GET(url, { params }) : client.POST(url, { params, body }));
  };
}
