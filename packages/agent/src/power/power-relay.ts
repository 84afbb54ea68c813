import type { RpcParams, RpcResult } from '@mm/protocol';
import { RpcError, type RpcRegistry } from '../rpc/rpc-registry.ts';

/** How long pdudaemon may take to answer one command (its reboot waits `delay` seconds between off and on). */
const BASE_TIMEOUT_MS = 60_000;

/**
 * A lab host's power relay (docs/power.md): `power.control` from the server becomes one
 * request to the pdudaemon of MM_PDUDAEMON_URL, `GET /power/control/<action>?hostname=&port=`
 * (`&delay=` for reboot). pdudaemon answers only once the command ran: 200 "OK - accepted
 * request", or 500 "Invalid request" (unknown PDU, bad request). pdudaemon 0.0.8 answers 200
 * even when its driver failed (after its retries): only its log says so.
 */
export function powerControlHandler(pdudaemonUrl: string | undefined, fetchImpl: typeof fetch = fetch) {
  return async (params: RpcParams<'power.control'>): Promise<RpcResult<'power.control'>> => {
    if (!pdudaemonUrl) throw new RpcError('not_lab_host', 'this agent is not a lab host (MM_PDUDAEMON_URL is not set)');
    const url = new URL(`${pdudaemonUrl}/power/control/${params.action}`);
    url.searchParams.set('hostname', params.hostname);
    url.searchParams.set('port', String(params.port));
    if (params.action === 'reboot' && params.delay_s !== undefined) url.searchParams.set('delay', String(params.delay_s));
    let res: Response;
    try {
      res = await fetchImpl(url, { signal: AbortSignal.timeout(BASE_TIMEOUT_MS + (params.delay_s ?? 5) * 1000) });
    } catch (err) {
      const cause = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
      throw new RpcError('pdu_unreachable', `pdudaemon at ${pdudaemonUrl} did not answer: ${cause}`);
    }
    const body = (await res.text()).slice(0, 2000);
    if (!res.ok) throw new RpcError('pdu_error', `pdudaemon answered ${res.status}: ${body.trim()}`);
    return { status: res.status, body };
  };
}

/** Registers `power.control` (every agent answers it; one without MM_PDUDAEMON_URL fails `not_lab_host`). */
export function registerPowerMethods(rpc: RpcRegistry, pdudaemonUrl: string | undefined): void {
  rpc.register('power.control', powerControlHandler(pdudaemonUrl));
}
