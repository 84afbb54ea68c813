export { Agent, agentPaths, type AgentOptions } from './agent.ts';
export { loadAgentConfig, connectUrlFor, ConfigError, type AgentConfig } from './config.ts';
export { createLogger, silentLogger, type Logger } from './logger.ts';
export { splitCommandLine } from './command-line.ts';
export { SimulatedBoard, simulatedDefaults } from './simulate/simulated-board.ts';
export { simulatedRunnerCommand } from './simulate/simulated-programs.ts';
export { RpcRegistry, RpcError, type RpcHandler, type RpcContext } from './rpc/rpc-registry.ts';
export { AGENT_VERSION } from './version.ts';
