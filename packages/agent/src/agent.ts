import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CloseCode, LINK_CODEC, LinkFeature, measuredDecodeRate, PROTOCOL_VERSION, systemClock, type Clock, type TimerHandle } from '@mm/protocol';
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
import { BitstreamSwap, isRunnerParameterFile } from './runner/accelerator-swap.ts';
import { appStateSource } from './runner/app-state-source.ts';
import { AGENT_VERSION } from './version.ts';
import { runnerLauncher } from '@mm/runner/home';
import { AcceleratorTools } from './accelerator/accelerator-tools.ts';
import { registerAppMethods } from './accelerator/app-rpc-handlers.ts';
import { prepareRun } from './accelerator/run-preparation.ts';
import { ChildSupervisor } from './scripts/child-supervisor.ts';
import { ScriptManager } from './scripts/script-manager.ts';
import { registerScriptMethods } from './scripts/script-rpc-handlers.ts';
import { registerPowerMethods } from './power/power-relay.ts';
import { SystemdSupervisor } from './scripts/systemd-supervisor.ts';
import { ToolChildren } from './board/tool-children.ts';
import { TerminalManager } from './terminal/terminal-manager.ts';

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
  /** Terminals: login shells in pseudo-terminals over the link (terminal/). */
  readonly terminals: TerminalManager;
  /** The accelerator tools (dfx-mgr-client/xmutil, xdputil): apps and DPU facts; undefined without the settings. */
  readonly accelerator: AcceleratorTools | undefined;
  /** mm-runner's bitstream step (runner/accelerator-swap.ts); only when MM_RUNNER is unset. */
  private readonly runAccelerator: BitstreamSwap | undefined;
  /** The connection whose server takes `scripts.state` (named `device.scripts` in its welcome). */
  private scriptsLink: ControlPlaneLink | undefined;
  private scriptsReport: TimerHandle | undefined;
  private readonly clock: Clock;

  private constructor(
    readonly config: AgentConfig,
    readonly log: Logger,
    readonly board: Board,
    readonly cache: ContentCache,
    readonly journal: Journal,
    readonly driver: BoardDriver,
    private readonly tools: ToolChildren,
    opts: AgentOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
    const paths = agentPaths(config.agentDir);
    this.telemetry = new TelemetrySampler({
      sensors: driver.sensors,
      // The board's own proc/ (MM_HOST_ROOT; the simulated board's tree), never the host's by mistake.
      root: driver.factsRoot,
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
    const accel = config.accelerator;
    this.accelerator = accel
      ? new AcceleratorTools({
          ...accel,
          hostRoot: driver.factsRoot,
          // The simulated tools keep their state in the simulated board's folder and write its vart.conf.
          env: { ...(driver.commandEnv ?? process.env), MM_APPS_DIR: accel.appsDir, ...(config.simulate ? { MM_SIM_HOST_ROOT: driver.factsRoot } : {}) },
          memoryFile: path.join(config.agentDir, 'accelerator.json'),
          children: tools,
        })
      : undefined;
    const accelerator = this.accelerator;
    this.runAccelerator = config.runnerIsDefault ? runAccelerator(config, driver, accelerator) : undefined;
    this.facts = new FactsReporter(
      new BoardFactsCollector({ root: driver.factsRoot, agentDir: config.agentDir, activePac: () => board.activePac() }),
      log.child({ component: 'facts' }),
      opts.clock,
      accelerator ? () => accelerator.facts() : undefined,
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
      startTemperature: () => this.telemetry.hottestNow(),
      ...(runnerVersionOf(driver.runner) ? { runnerVersion: runnerVersionOf(driver.runner)! } : {}),
      onEnded: () => void this.facts.recheck(),
      prepareRun: (msg, report) => prepareRun(accelerator, msg, report, () => void this.facts.recheck({ accelerator: true })),
      runnerExtraEnv: { MM_PYTHON: config.python ?? 'python3', ...driver.runnerEnv },
      ...(this.runAccelerator ? { accelerator: this.runAccelerator } : {}),
    });
    // RPC methods: one line each. PAC methods (pac.*, board.reboot) register here too.
    this.rpc.register('agent.info', agentInfoHandler(board, config.scriptsRoot.root));
    const requestRestart = opts.requestRestart;
    if (requestRestart) this.rpc.register('agent.update', agentUpdateHandler({ agentDir: config.agentDir, log: log.child({ component: 'update' }), requestRestart, clock: this.clock }));
    this.terminals = new TerminalManager(
      config.terminal ?? { enabled: false, user: undefined, via: 'self', idleMs: 900_000, shell: undefined, python: 'python3' },
      log.child({ component: 'terminal' }),
      this.clock,
    );
    // The server can only say "refused"; the why is here, for whoever reads the board's log.
    if (config.terminal?.enabled && config.terminal.refusal) log.warn({ component: 'terminal' }, config.terminal.refusal);
    registerPacMethods({
      rpc: this.rpc,
      driver,
      log,
      dropConnection: (code, reason) => {
        if (code === CloseCode.rebooting) void this.terminals.endAll(REBOOTING);
        this.link.dropConnection(code, reason);
      },
      clock: this.clock,
      children: tools,
    });
    if (accelerator) registerAppMethods(this.rpc, accelerator, { log, changed: () => void this.facts.recheck({ accelerator: true }) });
    // The board's own settings (MM_SCRIPT_PORTS) plus the scripts the driver itself runs decide
    // which loopback ports the relay reaches; the catalogue cannot widen them.
    this.deviceRelay = new LocalScriptRelay(log.child({ component: 'device-relay' }), [...config.scriptPorts, ...(driver.scriptPorts?.() ?? [])], opts.clock);
    driver.onAgentReboot?.((downMs) => this.rebootInProcess(downMs));
    const scriptLog = log.child({ component: 'device-scripts' });
    this.scripts = new ScriptManager({
      agentDir: config.agentDir,
      scripts: config.scriptsRoot,
      supervisor: config.simulate ? new ChildSupervisor(scriptLog, { clock: this.clock }) : new SystemdSupervisor(scriptLog, { clock: this.clock }),
      log: scriptLog,
      allowPort: (port) => this.deviceRelay.allowPort(port),
      clock: this.clock,
    });
    this.scripts.onChange(() => this.reportScripts());
    registerScriptMethods(this.rpc, this.scripts);
    // A lab host relays power commands for other boards to its pdudaemon (docs/power.md).
    registerPowerMethods(this.rpc, config.pdudaemonUrl);
  }

  /** Sends the scripts' states to a server that takes them, a moment after a change (changes come in bursts). */
  private reportScripts(): void {
    if (this.scriptsReport) return;
    this.scriptsReport = this.clock.setTimeout(() => {
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
    const tools = new ToolChildren();
    const pacOptions = pacCommandOptions(driver, tools);
    const board = new Board(driver.bootIdFile, () => readActivePac(pacOptions));
    const journal = await Journal.open(paths.journal, log.child({ component: 'journal' }));
    await recoverJournal(journal, { bootId: await board.bootId(), log: log.child({ component: 'journal' }) });
    // Runs of a previous agent process are over (recovery ended their processes): their folders go.
    for (const name of await fsp.readdir(paths.work)) await fsp.rm(path.join(paths.work, name), { recursive: true, force: true });
    const cache = new ContentCache(paths.cache, config.cacheMaxBytes, paths.invocations, log.child({ component: 'cache' }));
    await cache.init();
    const agent = new Agent(config, log, board, cache, journal, driver, tools, opts);
    // A run that held the FPGA when a previous agent process died: what it replaced goes back.
    const accelLog = log.child({ component: 'accelerator' });
    await agent.runAccelerator?.recover((line) => accelLog.warn(line)).catch((err: unknown) => accelLog.error({ err }, 'could not put the accelerator back'));
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
    const shells = this.terminals.endAll({ code: 'agent_stopping', message: 'The board agent is stopping.' });
    this.deviceRelay.close();
    this.telemetry.stop();
    this.facts.stop();
    this.clock.clearTimeout(this.scriptsReport);
    await this.scripts.close();
    await Promise.all([this.operations.shutdown(), this.link.stop()]);
    // Nothing the agent started may go on writing after it: tools in flight and hung-up shells.
    await Promise.all([this.tools.stop(), shells]);
    await this.driver.stop();
  }

  async buildHello(): Promise<HelloMessage> {
    const [facts, accelerator] = await Promise.all([this.facts.forHello(), this.facts.acceleratorForHello()]);
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
      features: [LinkFeature.boardFacts, LinkFeature.deviceScripts, LinkFeature.streamPush, ...(this.terminals.offered ? [LinkFeature.terminal] : []), ...(this.config.linkCompression !== 'off' ? [LinkFeature.streamCompression] : [])],
      // What a stream the server pushes may be compressed with (a push carries no offer of its own).
      ...(this.config.linkCompression !== 'off' ? { compression: { codecs: [LINK_CODEC], decode_bps: measuredDecodeRate() } } : {}),
      ...(facts ? { facts } : {}),
      ...(accelerator ? { accelerator } : {}),
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
      case 'term.open':
      case 'term.data':
      case 'term.ack':
      case 'term.resize':
      case 'term.close':
        return this.terminals.handle(message, connection);
      case 'rpc.request': {
        const response = await this.rpc.handle(message, { connection, log: this.log.child({ rpc: message.method }) });
        connection.sendMessage(response);
        // A PAC activation or install may have changed the active PAC: the facts follow (the accelerator's too).
        void this.facts.recheck({ accelerator: message.method.startsWith('pac.') });
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
    void this.terminals.endAll(REBOOTING);
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

/** What a terminal hears when the board goes down for a reboot (a PAC activation). */
const REBOOTING = { code: 'board_rebooting', message: 'The board is rebooting (a PAC activation): the session ended. Open a new one once the board is back.' };

/**
 * mm-runner's bitstream step (docs/runner.md): with MM_RUNNER unset, a run whose parameter
 * file is mm-runner's gets its bitstream loaded with fpgautil and the accelerator put back
 * after. Other runners load bitstreams themselves, as before.
 */
function runAccelerator(config: AgentConfig, driver: BoardDriver, apps: AcceleratorTools | undefined): BitstreamSwap {
  return new BitstreamSwap({
    fpgautil: config.fpgautil ?? ['fpgautil'],
    env: driver.commandEnv,
    // An active accelerated app is unloaded for the run and loaded again after (runner/app-state-source.ts).
    state: appStateSource(apps, driver.acceleratorState),
    applies: (inputs) => isRunnerParameterFile(inputs.get('parameter')),
    heldFile: path.join(config.agentDir, 'accelerator-held.json'),
  });
}

/**
 * A run's `runner_version` (docs/results.md): mm-runner and the simulated runner ship with the
 * agent, so they carry its version; a runner of MM_RUNNER's own is not known.
 */
function runnerVersionOf(argv: readonly string[]): string | undefined {
  const joined = argv.join(' ');
  if (joined.includes('simulated-runner')) return `simulated ${AGENT_VERSION}`;
  if (argv[0] === runnerLauncher()) return `mm-runner ${AGENT_VERSION}`;
  return undefined;
}
