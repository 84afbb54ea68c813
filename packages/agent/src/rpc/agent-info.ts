import { AGENT_VERSION } from '../version.ts';
import { debianArch } from '../enroll/board-facts.ts';
import type { Board } from '../board/board.ts';
import type { RpcHandler } from './rpc-registry.ts';

export function agentInfoHandler(board: Board, scriptsRoot?: string): RpcHandler<'agent.info'> {
  return async () => ({
    agent_version: AGENT_VERSION,
    boot_id: await board.bootId(),
    uptime_s: Math.round(process.uptime()),
    arch: debianArch(),
    ...(scriptsRoot !== undefined ? { scripts_root: scriptsRoot } : {}),
  });
}
