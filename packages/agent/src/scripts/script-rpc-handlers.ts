import type { RpcRegistry } from '../rpc/rpc-registry.ts';
import type { ScriptManager } from './script-manager.ts';

/** `script.deploy`, `script.control`, `script.logs` (docs/device-scripts.md). */
export function registerScriptMethods(rpc: RpcRegistry, scripts: ScriptManager): void {
  rpc.register('script.deploy', (params, ctx) => scripts.deploy(params, ctx));
  rpc.register('script.control', (params) => scripts.control(params));
  rpc.register('script.logs', async ({ script_id }) => ({ text: await scripts.logs(script_id) }));
}
