import { type ErrorInfo, type MessageOf, type RpcMethod, type RpcParams, type RpcResult, rpcMethods } from '@mm/protocol';
import type { Logger } from '../logger.ts';
import type { ControlPlaneLink } from '../link/control-plane-link.ts';

/** What a handler gets besides its params: the connection the request came on (to pull an upload, say). */
export interface RpcContext {
  connection: ControlPlaneLink;
  log: Logger;
}

export type RpcHandler<M extends RpcMethod> = (params: RpcParams<M>, ctx: RpcContext) => Promise<RpcResult<M>>;

/** A handler's failure with a stable code for `rpc.response.error` (`pac_not_found`, `command_failed`, …). */
export class RpcError extends Error {
  override name = 'RpcError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type RpcResponse = MessageOf<'rpc.response'>;

/**
 * Handlers of `rpc.request`, keyed by method name. Params are checked against the method's
 * schema in `rpcMethods` before the handler runs, and its result after (the server checks
 * again). A method without a handler is `unknown_method`.
 */
export class RpcRegistry {
  private readonly handlers = new Map<string, (params: unknown, ctx: RpcContext) => Promise<unknown>>();

  register<M extends RpcMethod>(method: M, handler: RpcHandler<M>): this {
    if (this.handlers.has(method)) throw new Error(`rpc method ${method} registered twice`);
    this.handlers.set(method, handler as (params: unknown, ctx: RpcContext) => Promise<unknown>);
    return this;
  }

  methods(): string[] {
    return [...this.handlers.keys()];
  }

  async handle(request: MessageOf<'rpc.request'>, ctx: RpcContext): Promise<RpcResponse> {
    const fail = (error: ErrorInfo): RpcResponse => ({ type: 'rpc.response', id: request.id, ok: false, error });
    const handler = this.handlers.get(request.method);
    if (!handler || !Object.hasOwn(rpcMethods, request.method)) {
      return fail({ code: 'unknown_method', message: `this agent has no method ${JSON.stringify(request.method)}` });
    }
    const schema = rpcMethods[request.method as RpcMethod];
    const params = schema.params.safeParse(request.params ?? {});
    if (!params.success) {
      const detail = params.error.issues.map((i) => `${i.path.join('.') || '(params)'}: ${i.message}`).join('; ');
      return fail({ code: 'invalid_params', message: `${request.method}: ${detail}` });
    }
    let result: unknown;
    try {
      result = await handler(params.data, ctx);
    } catch (err) {
      if (err instanceof RpcError) return fail({ code: err.code, message: err.message });
      ctx.log.error({ err, method: request.method }, 'rpc handler failed');
      return fail({ code: 'internal_error', message: err instanceof Error ? err.message : String(err) });
    }
    const checked = schema.result.safeParse(result);
    if (!checked.success) {
      ctx.log.error({ method: request.method, issues: checked.error.issues }, 'rpc handler returned a result that does not match its schema');
      return fail({ code: 'invalid_result', message: `${request.method}: the agent produced an invalid result` });
    }
    return { type: 'rpc.response', id: request.id, ok: true, result: checked.data };
  }
}
