import { z } from 'zod';

/**
 * The methods the server may call on the agent with rpc.request, each with the schema of
 * its params and of its result. Both sides check both: the agent its params, the server
 * the result. Add a method here, then its handler in the agent's rpc registry.
 */
export const rpcMethods = {
  /** Liveness and clock check; answers the agent's view of itself. */
  'agent.info': {
    params: z.object({}),
    result: z.object({ agent_version: z.string(), boot_id: z.string(), uptime_s: z.number() }),
  },
} as const satisfies Record<string, { params: z.ZodType; result: z.ZodType }>;

export type RpcMethod = keyof typeof rpcMethods;
export type RpcParams<M extends RpcMethod> = z.infer<(typeof rpcMethods)[M]['params']>;
export type RpcResult<M extends RpcMethod> = z.infer<(typeof rpcMethods)[M]['result']>;

export function isRpcMethod(name: string): name is RpcMethod {
  return Object.hasOwn(rpcMethods, name);
}
