import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CloseCode, LINK_CODEC, LinkFeature, measuredDecodeRate, PROTOCOL_VERSION, type Clock } from '@mm/protocol';
import { Board } from './board/board.ts';
import { realBoardDriver, type BoardDriver } from './board/board-driver.ts';
import { BoardFactsCollector } from './board/board-facts.ts';
import { FactsReporter } from './board/facts-reporter.ts';
import { ContentCache } from './cache/content-cache.ts';
import type { AgentConfig } from './config.ts';
import { Journal } from './journal/journal.ts';
import { recoverJournal } from './journal/recover.ts';
import type { ControlPlaneLink, DispatchedMessage, HelloMessage } from './link/control-plane-link.ts';
import { ServerLink } from './link/server-link.ts';
import type { Logger } from './logger.ts';
import { OperationManager } from './operations/operation-manager.ts';
import { readActivePac } from './pac/pac-rpc-handlers.ts';
import { pacCommandOptions, registerPacMethods } from './pac/pac-wiring.ts';
import { agentInfoHandler } from './rpc/agent-info.ts';
import { RpcRegistry } from './rpc/rpc-registry.ts';
import { agentUpdateHandler, confirmUpdate } from './update/agent-update.ts';
import { LocalScriptRelay } from './device-relay/local-script-relay.ts';
import { TelemetrySampler } from './telemetry/telemetry-sampler.ts';
import { AGENT_VERSION } from './version.ts';
import { ChildSupervisor } from './scripts/child-supervisor.ts';
import { ScriptManager } from './scripts/script-manager.ts';
import { registerScriptMethods } from './scripts/script-rpc-handlers.ts';
import { SystemdSupervisor } from './scripts/systemd-supervisor.ts';

export interface AgentOptions {
  config: AgentConfig;
  log: Logger;
  /** The board it drives (main.ts chooses: real or simulated); default the real one from the config. */
  driver?: BoardDriver;
  /** Heartbeats, reconnect backoff, progress throttles and run timeouts (default: the system clock). */
  clock?: Clock;
  /** Between SIGTERM and SIGKILL when a run is stopped (default 5 s). */
  cancelGraceMs?: number;
  /** The runner's inherited environment (default: the agent's). */
  runnerEnv?: NodeJS.ProcessEnv;
  /** First reconnect backoff ceiling (default 500 ms). */
  reconnectBaseMs?: number;
  /** An agent update switched versions: stop and exit so the start script runs the new one (main.ts). */
  requestRestart?: () => void;
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
  readonly deviceRelay: LocalScriptRelay;
  /** Board telemetry every MM_TELEMETRY_INTERVAL_S, and the runs' peak temperature and mean power. */
  readonly telemetry: TelemetrySampler;
  /** The board's facts: in hello, and `board.facts` when they change. */
  readonly facts: FactsReporter;
  /** Device scripts deployed on the board, supervised (scripts/). */
  readonly scripts: ScriptManager;
  /** The connection whose server takes `scripts.state` (named `device.scripts` in its welcome). */
  private scriptsLink: ControlPlaneLink | undefined;
  private scriptsReport: NodeJS.Timeout | undefined;

  private constructor(
    readonly config: AgentConfig,
    readonly log: Logger,
    readonly board: Board,
    readonly cache: ContentCache,
    readonly journal: Journal,
    readonly driver: BoardDriver,
    opts: AgentOptions,
  ) {
    const paths = agentPaths(config.agentDir);
    this.telemetry = new TelemetrySampler({
      sensors: driver.sensors,
      root: '/',
      agentDir: config.agentDir,
      intervalMs: config.telemetryIntervalMs,
      // Only to a server that takes it (an older one would answer each with an error).
      send: (reading) => {
        const connection = this.link.current;
        if (!connection?.welcome?.features?.includes(LinkFeature.boardTelemetry)) return false;
        return connection.sendMessage({ type: 'board.telemetry', reading });
      },
      log: log.child({ component: 'telemetry' }),
      ...(opts.clock ? { clock: opts.clock } : {}),
    });
    this.facts = new FactsReporter(
      new BoardFactsCollector({ root: driver.factsRoot, agentDir: config.agentDir, activePac: () => board.activePac() }),
      log.child({ component: 'facts' }),
      opts.clock,
    );
    this.link = new ServerLink({
      url: config.connectUrl,
      token: config.boardToken,
      heartbeatIntervalMs: config.heartbeatIntervalMs,
      heartbeatTimeoutMs: config.heartbeatTimeoutMs,
      reconnectMaxDelayMs: config.reconnectMaxDelayMs,
      ...(config.linkCompression !== 'off' ? { compressPolicy: config.linkCompression } : {}),
      ...(opts.reconnectBaseMs !== undefined ? { reconnectBaseMs: opts.reconnectBaseMs } : {}),
      log: log.child({ component: 'link' }),
      ...(opts.clock ? { clock: opts.clock } : {}),
      handlers: {
        buildHello: () => this.buildHello(),
        onReady: (connection, welcome, hello) => {
          this.operations.onLinkReady(connection, hello);
          void this.telemetry.sendNow();
          this.facts.onReady(connection, welcome, hello);
          this.scriptsLink = welcome.features?.includes(LinkFeature.deviceScripts) ? connection : undefined;
          void confirmUpdate(config.agentDir, log).catch((err: unknown) => log.warn({ err }, 'could not confirm the agent update'));
        },
        onMessage: (message, connection) => this.dispatch(message, connection),
      },
    });
    this.operations = new OperationManager({
      cache,
      journal,
      link: this.link,
      board,
      log: log.child({ component: 'operations' }),
      invocationsDir: paths.invocations,
      workDir: paths.work,
      runnerArgv: driver.runner,
      runTimeoutMs: config.runTimeoutMs,
      ...(opts.cancelGraceMs !== undefined ? { cancelGraceMs: opts.cancelGraceMs } : {}),
      ...(opts.runnerEnv ? { runnerEnv: opts.runnerEnv } : {}),
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(config.runnerUser ? { runAs: config.runnerUser } : {}),
      watchRun: () => this.telemetry.watchRun(),
      onEnded: () => void this.facts.recheck(),
    });
    // RPC methods: one line each. PAC methods (pac.*, board.reboot) register here too.
    this.rpc.register('agent.info', agentInfoHandler(board, config.scriptsRoot.root));
    const requestRestart = opts.requestRestart;
    if (requestRestart) this.rpc.register('agent.update', agentUpdateHandler({ agentDir: config.agentDir, log: log.child({ component: 'update' }), requestRestart }));
    registerPacMethods({ rpc: this.rpc, driver, log, dropConnection: (code, reason) => this.link.dropConnection(code, reason) });
    // The board's own settings (MM_SCRIPT_PORTS) plus the scripts the driver itself runs decide
    // which loopback ports the relay reaches; the catalogue cannot widen them.
    this.deviceRelay = new LocalScriptRelay(log.child({ component: 'device-relay' }), [...config.scriptPorts, ...(driver.scriptPorts?.() ?? [])], opts.clock);
    driver.onAgentReboot?.((downMs) => this.rebootInProcess(downMs));
    const scriptLog = log.child({ component: 'device-scripts' });
    this.scripts = new ScriptManager({
      agentDir: config.agentDir,
      scripts: config.scriptsRoot,
      supervisor: config.simulate ? new ChildSupervisor(scriptLog) : new SystemdSupervisor(scriptLog),
      log: scriptLog,
      allowPort: (port) => this.deviceRelay.allowPort(port),
    });
    this.scripts.onChange(() => this.reportScripts());
    registerScriptMethods(this.rpc, this.scripts);
  }

  /** Sends the scripts' states to a server that takes them, a moment after a change (changes come in bursts). */
  private reportScripts(): void {
    if (this.scriptsReport) return;
    this.scriptsReport = setTimeout(() => {
      this.scriptsReport = undefined;
      const link = this.scriptsLink;
      if (!link?.isReady) return;
      this.scripts
        .states()
        .then((scripts) => link.sendMessage({ type: 'scripts.state', scripts }))
        .catch((err: unknown) => this.log.warn({ err }, "could not report the device scripts' states"));
    }, 100);
    this.scriptsReport.unref();
  }

  static async create(opts: AgentOptions): Promise<Agent> {
    const { config, log } = opts;
    const paths = agentPaths(config.agentDir);
    await fsp.mkdir(paths.work, { recursive: true });
    await fsp.mkdir(paths.invocations, { recursive: true });
    const driver = opts.driver ?? realBoardDriver(config, log);
    const pacOptions = pacCommandOptions(driver);
    const board = new Board(driver.bootIdFile, () => readActivePac(pacOptions));
    const journal = await Journal.open(paths.journal, log.child({ component: 'journal' }));
    await recoverJournal(journal, { bootId: await board.bootId(), log: log.child({ component: 'journal' }) });
    // Runs of a previous agent process are over (recovery ended their processes): their folders go.
    for (const name of await fsp.readdir(paths.work)) await fsp.rm(path.join(paths.work, name), { recursive: true, force: true });
    const cache = new ContentCache(paths.cache, config.cacheMaxBytes, paths.invocations, log.child({ component: 'cache' }));
    await cache.init();
    const agent = new Agent(config, log, board, cache, journal, driver, opts);
    await agent.scripts.init();
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
    this.telemetry.start();
  }

  async stop(): Promise<void> {
    this.deviceRelay.close();
    this.telemetry.stop();
    this.facts.stop();
    if (this.scriptsReport) clearTimeout(this.scriptsReport);
    await this.scripts.close();
    await Promise.all([this.operations.shutdown(), this.link.stop()]);
    await this.driver.stop();
  }

  async buildHello(): Promise<HelloMessage> {
    const facts = await this.facts.forHello();
    return {
      type: 'hello',
      protocol_version: PROTOCOL_VERSION,
      agent_version: AGENT_VERSION,
      hostname: os.hostname(),
      platform: this.driver.platform,
      arch: process.arch,
      boot_id: await this.board.bootId(),
      active_pac: await this.board.activePac().catch((err: unknown) => {
        this.log.warn({ err }, 'could not tell the active PAC');
        return null;
      }),
      cached: await this.cache.list(),
      ...this.operationsForHello(),
      features: [LinkFeature.boardFacts, LinkFeature.deviceScripts, LinkFeature.streamPush, ...(this.config.linkCompression !== 'off' ? [LinkFeature.streamCompression] : [])],
      // What a stream the server pushes may be compressed with (a push carries no offer of its own).
      ...(this.config.linkCompression !== 'off' ? { compression: { codecs: [LINK_CODEC], decode_bps: measuredDecodeRate() } } : {}),
      ...(facts ? { facts } : {}),
      scripts: await this.scripts.states(),
    };
  }

  /** `running` and `finished` of the hello: an ended operation whose log goes again first counts as running. */
  private operationsForHello(): Pick<HelloMessage, 'running' | 'finished'> {
    const logPending = this.operations.endedAwaitingAck();
    return {
      running: [...new Set([...this.operations.runningIds(), ...logPending])],
      finished: this.journal.outcomes().filter((o) => !logPending.has(o.op_id)),
    };
  }

  private async dispatch(message: DispatchedMessage, connection: ControlPlaneLink): Promise<void> {
    switch (message.type) {
      case 'op.start':
      case 'op.cancel':
      case 'op.result.ack':
        return this.operations.handle(message);
      case 'stream.pull':
        if (LocalScriptRelay.serves(message.source)) return this.deviceRelay.serveBody(message, connection);
        return this.operations.serveProduced(message, connection);
      case 'http.request':
      case 'http.abort':
      case 'sse.subscribe':
      case 'sse.unsubscribe':
        return this.deviceRelay.handle(message, connection);
      case 'rpc.request': {
        const response = await this.rpc.handle(message, { connection, log: this.log.child({ rpc: message.method }) });
        connection.sendMessage(response);
        // A PAC activation or install may have changed the active PAC: the facts follow.
        void this.facts.recheck();
        return;
      }
    }
  }

  /**
   * What a reboot does to the agent on a board it lives through (the simulated one): what
   * was running ends (a run is reported `agent_restarted`, as after a real reboot), the link
   * drops with 4004 and comes back after `downMs` with the new boot id.
   */
  private async rebootInProcess(downMs: number): Promise<void> {
    let booted!: () => void;
    this.link.dropConnection(CloseCode.rebooting, 'rebooting', { pauseMs: downMs, until: new Promise<void>((resolve) => (booted = resolve)) });
    try {
      await this.operations.shutdown();
      await recoverJournal(this.journal, { bootId: await this.board.bootId(), log: this.log.child({ component: 'journal' }) });
    } finally {
      this.operations.resume();
      booted();
    }
  }
}
