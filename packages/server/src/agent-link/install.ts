import type { AppContext } from '../app-context.ts';
import type { Operations } from '../operations/operations.ts';
import type { AgentHub } from './hub.ts';

/**
 * Wires the agent hub and the operations service into the context once it is built:
 * board presence for /api/health/, the invocation-delete hook, recovery of queued and
 * running operations, and the graceful shutdown (operations settle, then links close with
 * 1001 so agents reconnect to the next server).
 */
export async function startBoardServices(ctx: AppContext & { agents: AgentHub; operations: Operations }): Promise<void> {
  ctx.agents.attach(ctx);
  ctx.operations.attach(ctx);
  ctx.boardsOnline = () => ctx.agents.onlineCount();
  ctx.cancelOperationsOf = (invocationId) => ctx.operations.cancelOperationsOf(invocationId);
  await ctx.operations.recover();
  ctx.shutdownHooks.push(async () => {
    ctx.operations.stop();
    await ctx.agents.shutdown();
    await ctx.operations.drain();
  });
}
