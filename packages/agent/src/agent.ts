import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CloseCode, PROTOCOL_VERSION } from '@mm/protocol';
import { Board } from './board.ts';
import { ContentCache } from './cache/content-cache.ts';
import type { AgentConfig } from './config.ts';
import { Journal } from './journal/journal.ts';
import { recoverJournal } from './journal/recover.ts';
import type { AgentConnection, DispatchedMessage, HelloMessage } from './link/agent-connection.ts';
import { ServerLink } from './link/server-link.ts';
import type { Logger } from './logger.ts';
import { OperationManager } from './operations/operation-manager.ts';
import { registerPacMethods } from './pac/pac-wiring.ts';
import { agentInfoHandler } from './rpc/agent-info.ts';
import { RpcRegistry } from './rpc/rpc-registry.ts';
import { DeviceRelay } from './device-relay/device-relay.ts';
import type { SimulatedBoard } from './simulate/simulated-board.ts';
import { AGENT_VERSION } from './version.ts';

export interface AgentOptions {
  config: AgentConfig;
  log: Logger;
  /** With --simulate: the simulated board (boot id, reboot, devices). */
  simulatedBoard?: SimulatedBoard;
  /** Between SIGTERM and SIGKILL when a run is stopped (default 5 s). */
  cancelGraceMs?: number;
  /** The runner's inherited environment (default: the agent's). */
  runnerEnv?: NodeJS.ProcessEnv;
  /** First reconnect backoff ceiling (default 500 ms). */
  reconnectBaseMs?: number;
}

/** The folders the agent keeps under MM_AGENT_DIR. */
export function agentPaths(agentDir: string) {
  return {
    cache: path.join(agentDir, 'cache'),
    invocations: path.join(agentDir, 'invocations'),
    work: path.join(agentDir, 'work'),
    journal: agentDir,
  };
}

/**
 * The board agent: its cache, journal, operations and RPC handlers, and the link that
 * carries them. `create()` settles what a previous run left (journal recovery, stale work
 * folders); `start()` connects; `stop()` ends the runs and closes the link.
 */
export class Agent {
  readonly link: ServerLink;
  readonly rpc = new RpcRegistry();
  readonly operations: OperationManager;
  /** Device-script relay: proxied requests and followed event streams (device-relay/). */
  readonly deviceRelay: DeviceRelay;

  private constructor(
    readonly config: AgentConfig,
    readonly log: Logger,
    readonly board: Board,
    readonly cache: ContentCache,
    readonly journal: Journal,
    readonly simulatedBoard: SimulatedBoard | undefined,
    opts: AgentOptions,
  ) {
    const paths = agentPaths(config.agentDir);
    this.link = new ServerLink({
      url: config.connectUrl,
      token: config.boardToken,
      heartbeatIntervalMs: config.heartbeatIntervalMs,
      heartbeatTimeoutMs: config.heartbeatTimeoutMs,
      reconnectMaxDelayMs: config.reconnectMaxDelayMs,
      ...(opts.reconnectBaseMs !== undefined ? { reconnectBaseMs: opts.reconnectBaseMs } : {}),
      log: log.child({ component: 'link' }),
      handlers: {
        buildHello: () => this.buildHello(),
        onReady: (connection, _welcome, hello) => this.operations.onLinkReady(connection, hello),
        onMessage: (message, connection) => this.dispatch(message, connection),
      },
    });
    if (!config.runner) throw new Error('no runner command (MM_RUNNER)');
    this.operations = new OperationManager({
      cache,
      journal,
      link: this.link,
      board,
      log: log.child({ component: 'operations' }),
      invocationsDir: paths.invocations,
      workDir: paths.work,
      runnerArgv: config.runner,
      runTimeoutMs: config.runTimeoutMs,
      ...(opts.cancelGraceMs !== undefined ? { cancelGraceMs: opts.cancelGraceMs } : {}),
      ...(opts.runnerEnv ? { runnerEnv: opts.runnerEnv } : {}),
      ...(config.runnerUser ? { runAs: config.runnerUser } : {}),
    });
    // RPC methods: one line each. PAC methods (pac.*, board.reboot) register here too.
    this.rpc.register('agent.info', agentInfoHandler(board));
    registerPacMethods(this);
    const simulatedScriptPort = simulatedBoard?.motorUrl ? Number(new URL(simulatedBoard.motorUrl).port) : undefined;
    this.deviceRelay = new DeviceRelay(log.child({ component: 'device-relay' }), [...config.scriptPorts, ...(simulatedScriptPort ? [simulatedScriptPort] : [])]);
    if (simulatedBoard) simulatedBoard.onReboot = () => this.simulateReboot();
  }

  static async create(opts: AgentOptions): Promise<Agent> {
    const { config, log } = opts;
    const paths = agentPaths(config.agentDir);
    await fsp.mkdir(paths.work, { recursive: true });
    await fsp.mkdir(paths.invocations, { recursive: true });
    const board = new Board(opts.simulatedBoard?.bootIdFile ?? config.bootIdFile);
    const journal = await Journal.open(paths.journal, log.child({ component: 'journal' }));
    await recoverJournal(journal, { bootId: await board.bootId(), log: log.child({ component: 'journal' }) });
    // Runs of a previous agent process are over (recovery ended their processes): their folders go.
    for (const name of await fsp.readdir(paths.work)) await fsp.rm(path.join(paths.work, name), { recursive: true, force: true });
    const cache = new ContentCache(paths.cache, config.cacheMaxBytes, paths.invocations, log.child({ component: 'cache' }));
    await cache.init();
    const agent = new Agent(config, log, board, cache, journal, opts.simulatedBoard, opts);
    // Outputs awaiting acknowledgement are pinned by now; trim to the cap.
    await cache.ensureSpace(0);
    return agent;
  }

  start(): void {
    this.log.info(
      { agent_version: AGENT_VERSION, server: this.config.connectUrl, agent_dir: this.config.agentDir, simulate: this.config.simulate },
      'agent starting',
    );
    this.link.start();
  }

  async stop(): Promise<void> {
    this.deviceRelay.close();
    await Promise.all([this.operations.shutdown(), this.link.stop()]);
    await this.simulatedBoard?.stop();
  }

  async buildHello(): Promise<HelloMessage> {
    return {
      type: 'hello',
      protocol_version: PROTOCOL_VERSION,
      agent_version: AGENT_VERSION,
      hostname: os.hostname(),
      platform: this.simulatedBoard ? `${process.platform} (simulated board)` : process.platform,
      arch: process.arch,
      boot_id: await this.board.bootId(),
      active_pac: await this.board.activePac().catch((err: unknown) => {
        this.log.warn({ err }, 'could not tell the active PAC');
        return null;
      }),
      cached: await this.cache.list(),
      running: this.operations.runningIds(),
      finished: this.journal.outcomes(),
    };
  }

  private async dispatch(message: DispatchedMessage, connection: AgentConnection): Promise<void> {
    switch (message.type) {
      case 'op.start':
      case 'op.cancel':
      case 'op.result.ack':
        return this.operations.handle(message);
      case 'stream.pull':
        if (DeviceRelay.serves(message.source)) return this.deviceRelay.serveBody(message, connection);
        return this.operations.serveProduced(message, connection);
      case 'http.request':
      case 'http.abort':
      case 'sse.subscribe':
      case 'sse.unsubscribe':
        return this.deviceRelay.handle(message, connection);
      case 'rpc.request': {
        const response = await this.rpc.handle(message, { connection, log: this.log.child({ rpc: message.method }) });
        connection.sendMessage(response);
        return;
      }
    }
  }

  /**
   * What a reboot does to the agent on the simulated board: what was running ends (a run
   * is reported `agent_restarted`, as after a real reboot), the link drops with 4004 and
   * comes back after a short "boot" with the new boot id.
   */
  private async simulateReboot(): Promise<void> {
    let booted!: () => void;
    this.link.dropConnection(CloseCode.rebooting, 'rebooting', { pauseMs: this.simulatedBoard?.rebootDownMs ?? 1000, until: new Promise<void>((resolve) => (booted = resolve)) });
    try {
      await this.operations.shutdown();
      await recoverJournal(this.journal, { bootId: await this.board.bootId(), log: this.log.child({ component: 'journal' }) });
    } finally {
      this.operations.resume();
      booted();
    }
  }
}
