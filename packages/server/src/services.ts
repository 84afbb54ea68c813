import fs from 'node:fs/promises';
import { systemClock, type Clock } from '@mm/protocol';
import { BoardLinks } from './agent-link/board-links.ts';
import { AuthService } from './auth/auth-service.ts';
import { AgentHub } from './agent-link/hub.ts';
import { UploadRegistry } from './agent-link/uploads.ts';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { DeviceRelay } from './device-relay/device-relay.ts';
import { DEFAULT_STREAM_RELAY_OPTIONS } from './device-relay/stream-relay.ts';
import { DEFAULT_CAMERA_RELAY_OPTIONS } from './device-relay/camera-relay.ts';
import { InProcessEventBus, type EventBus } from './events/event-bus.ts';
import { PgEventBus } from './events/pg-event-bus.ts';
import type { Logger } from './logger.ts';
import { ServerMetrics } from './metrics/server-metrics.ts';
import { FleetScheduler } from './fleet/scheduler.ts';
import { PgSchedulerStore } from './fleet/scheduler-store.ts';
import { HealthChecks } from './fleet/health-check-service.ts';
import { requireInvocation } from './invocations/invocations.ts';
import { BoardLostWatch } from './operations/board-lost.ts';
import { boardHealthSamples } from './fleet/board-health-metric.ts';
import { OperationEventLog } from './operations/event-log.ts';
import { OperationKindRegistry, type OperationKind } from './operations/kinds.ts';
import { onOperationEnded, operationEventReplay } from './operations/operation-bus-topics.ts';
import { DEFAULT_OPERATION_STREAM_OPTIONS, OperationEventStreams } from './operations/operation-event-streams.ts';
import { Operations } from './operations/operations.ts';
import { ArchiveUploads } from './pacs/archive-uploads.ts';
import { BoardCalls } from './replicas/board-calls.ts';
import { BoardSessions } from './replicas/board-sessions.ts';
import { registerPacKinds } from './pacs/pac-operations.ts';
import { PacLists } from './pacs/pac-lists.ts';
import { registerAgentUpdateKind } from './agent-update/agent-update-kind.ts';
import { boardHelloReader } from './agent-update/board-hello.ts';
import { Rollouts } from './rollouts/rollouts.ts';
import { RolloutEventStreams } from './rollouts/rollout-event-streams.ts';
import { registerScriptOperations } from './device-scripts/script-operations.ts';
import { RetentionPruner } from './retention/retention-pruner.ts';
import { BoardTelemetryService } from './telemetry/board-telemetry.ts';
import { pruneTelemetryBatch, TELEMETRY_KEEP_MS } from './telemetry/telemetry-store.ts';
import { discardIngestedContent, sweepContentStore, sweepOrphanContent } from './invocations/invocation-files.ts';
import { ContentPinTable } from './storage/content-pins.ts';
import type { StoreContext } from './store-context.ts';
import type { BlobStore } from './storage/blob-store.ts';
import { createBlobStore } from './storage/create-blob-store.ts';
import { ResumableUploads } from './uploads/resumable-uploads.ts';
import { SERVER_VERSION } from './version.ts';
import { Boards } from './boards/boards.ts';
import { ProvisioningKeys } from './enrollment/provisioning-keys-service.ts';
import { DeviceScripts } from './device-scripts/device-scripts.ts';
import { AcceleratorService } from './apps/accelerator-service.ts';
import { registerAppKinds } from './apps/app-operations.ts';
import { Webhooks } from './webhooks/webhooks.ts';
import { Reservations } from './reservations/reservations.ts';
import { Results } from './results/results.ts';
import { TerminalRelay } from './terminal/terminal-relay.ts';
import { TerminalStore } from './terminal/terminal-store.ts';
import { Power } from './power/power.ts';
import { registerPowerKinds } from './power/power-kinds.ts';
import { Recovery } from './power/recovery.ts';

/** Every service of the control plane, built once by `createServices` and handed to the route factories. */
export interface Services extends StoreContext {
  version: string;
  /** Content-addressed bytes (`MM_DATA_DIR/content` today): invocation files, what boards return, PAC archives. */
  files: BlobStore;
  /** Operation events, board status changes and work for other replicas: in process, or over PostgreSQL (DATABASE_URL). */
  bus: EventBus;
  /** Where each board's link lives (board_sessions), across replicas. */
  sessions: BoardSessions;
  /** Each board's live link: presence, reboot watches, RPC (`agents.call`). */
  agents: BoardLinks;
  /** Accepts agent connections, greets them, serves their pulls, routes their messages. */
  hub: AgentHub;
  /** Files offered to one board for one RPC (`upload` pull sources). */
  uploads: UploadRegistry;
  /** The server-side operation kinds (PAC kinds, and whatever else registers). */
  operationKinds: OperationKindRegistry;
  /** Operations: create, wait, cancel, list; the per-board queue; their event log. */
  operations: Operations;
  /** The operations' SSE streams (`…/events/`). */
  operationStreams: OperationEventStreams;
  /** PAC archives offered to boards for `pac.install`. */
  archives: ArchiveUploads;
  /** The device-script proxy and event-stream relay. */
  deviceRelay: DeviceRelay;
  /** People and access: users, tokens, sessions, roles, the audit log, cutting revoked requests. */
  auth: AuthService;
  /** Resumable (tus) uploads at `/api/uploads/`: part files, their rows, expiry sweeps. */
  resumableUploads: ResumableUploads;
  /** Board telemetry: the agents' samples, their 24 h history, the per-board gauges. */
  telemetry: BoardTelemetryService;
  /** The Prometheus registry and its instruments (`GET /api/metrics/`). */
  metrics: ServerMetrics;
  /** Rollouts: one operation kind on many boards, in phases, with an automatic abort (docs/rollouts.md). */
  rollouts: Rollouts;
  /** The rollouts' SSE streams (`GET /api/rollouts/<id>/events/`). */
  rolloutStreams: RolloutEventStreams;
  /** Removes old finished operations and unrecorded content (MM_RETENTION_DAYS), hourly. */
  retention: RetentionPruner;
  /** Gives waiting selector work its board; runs health checks when due (docs/fleet.md). */
  scheduler: FleetScheduler;
  healthChecks: HealthChecks;
  /** The time every deadline, expiry and timer goes by (tests of timing logic pass a ManualClock). */
  clock: Clock;
  /** The boards as the API shows them: registered, listed, changed, deleted (presence and work included). */
  boards: Boards;
  /** Enrollment: provisioning keys, their exchange for board tokens, approving pending boards. */
  provisioningKeys: ProvisioningKeys;
  /** The device-script catalogue, each version's program, and where each script is deployed. */
  deviceScripts: DeviceScripts;
  /** Each board's last known PACs (`GET /api/boards/<id>/pacs/`), kept by its PAC queries. */
  pacLists: PacLists;
  /** Answers once the database does; throws when it cannot (`GET /api/health/`). */
  pingDatabase(): Promise<void>;
  /** Boards' accelerated applications and DPU, and the checks of a model against them (docs/accelerators.md). */
  accelerators: AcceleratorService;
  /** Webhook subscriptions, their events and deliveries; `webhooks.emit(type, data)` tells subscribers (docs/webhooks.md). */
  webhooks: Webhooks;
  /** Reservations: leases on boards with a fair queue; `holds(userId, boardId)` for the terminal (docs/reservations.md). */
  reservations: Reservations;
  /** Baselines and comparisons of repeated runs (docs/results.md). */
  results: Results;
  /** Terminals on boards: the checks before the upgrade, the relay of each session, its audit and recording (docs/terminal.md). */
  terminals: TerminalRelay;
  /** Terminal sessions as recorded: listed and played back by admins, pruned with MM_RETENTION_DAYS. */
  terminalSessions: TerminalStore;
  /** Power control through lab hosts and pdudaemon, and the boards' incidents (docs/power.md). */
  power: Power;
  /** Hang detection and recovery without a person: unresponsive boards power-cycled and checked (docs/power.md). */
  recovery: Recovery;
  /**
   * Graceful stop, before the database closes: event streams end, runs settle, links close.
   * `step` hears the name of each part before it is awaited (a shutdown that hangs says where).
   */
  shutdown(step?: (name: string) => void): Promise<void>;
}

export interface ServicesOptions {
  /** More server-side operation kinds (tests), registered before operations are recovered. */
  operationKinds?: Record<string, OperationKind>;
  /** Time for heartbeats and grace periods (tests of timing logic pass a ManualClock). */
  clock?: Clock;
}

/**
 * The composition root: builds every service in dependency order, each given what it uses
 * in its constructor, then runs the startup work (content sweep, recovery of operations)
 * before anything can connect.
 *
 *   files, bus ─► agents (BoardLinks) ─► operation kinds, event log ─► operations, operation streams
 *     ─► uploads, archives (+ PAC kinds) ─► hub (calls operations.agent as its BoardWork) ─► device relay
 */
export async function createServices(config: Config, database: Database, log: Logger, opts: ServicesOptions = {}): Promise<Services> {
  const clock = opts.clock ?? systemClock;
  const files = await createBlobStore(config);
  // Several replicas may share the store: pins are rows every replica's collection honours.
  const contentPins = config.databaseUrl ? new ContentPinTable(database.db, config.replicaName, log.child({ component: 'content-pins' })) : undefined;
  if (contentPins) files.usePinLedger?.(contentPins);
  const replicaLog = log.child({ component: 'replicas', replica: config.replicaName });
  // With a real PostgreSQL, several replicas may share it: the bus goes through LISTEN/NOTIFY.
  const pgBus = config.databaseUrl
    ? new PgEventBus({
        databaseUrl: config.databaseUrl,
        db: database.db,
        replicaId: config.replicaName,
        log: replicaLog,
        replayed: operationEventReplay(database.db),
        clock,
      })
    : undefined;
  const bus: EventBus = pgBus ?? new InProcessEventBus((err, topic) => log.error({ err, topic }, 'an event bus listener failed'));
  const store: StoreContext = { config, database, files, log };
  const sessions = new BoardSessions(database.db, config.replicaName, replicaLog, { clock });
  // Made early so that any service built below can be handed `webhooks.emit`; started last.
  const webhooks = await Webhooks.create({
    db: database.db,
    bus,
    clock,
    log: log.child({ component: 'webhooks' }),
    config,
    version: SERVER_VERSION,
    sessionStaleMs: sessions.staleMs,
  });
  const agents = new BoardLinks(bus, config.rebootTimeoutMs, sessions, log.child({ component: 'agent-link' }), clock);
  const calls = new BoardCalls({ db: database.db, bus, replicaId: config.replicaName, log: replicaLog, links: agents, clock });
  agents.useRemoteCalls(calls);
  const operationKinds = new OperationKindRegistry();
  const events = new OperationEventLog(database.db, log.child({ component: 'operations' }), bus);
  const operations = new Operations({ ...store, agents, bus, events, kinds: operationKinds, clock });
  const operationStreams = new OperationEventStreams({ events, bus }, { clock, ...DEFAULT_OPERATION_STREAM_OPTIONS });
  const uploads = new UploadRegistry();
  const archives = new ArchiveUploads({
    uploads,
    discard: (sha256) => discardIngestedContent(store, sha256),
    has: (sha256) => files.has(sha256),
    events,
    getOperation: (id) => operations.get(id),
    log,
  });
  registerPacKinds(operationKinds, { db: database.db, agents, bus, archives, rebootTimeoutMs: config.rebootTimeoutMs, clock });
  registerAppKinds(operationKinds, { db: database.db, archives });
  registerAgentUpdateKind(operationKinds, { board: boardHelloReader(database.db), bus, uploads, packagesDir: config.packagesDir, timeoutMs: config.agentUpdateTimeoutMs, clock });
  registerPowerKinds(operationKinds, { db: database.db, agents, clock, cycleOffS: config.power.cycleOffS });
  for (const [kind, definition] of Object.entries(opts.operationKinds ?? {})) operationKinds.register(kind, definition);
  const hub = new AgentHub({ config, log, db: database.db, links: agents, work: operations.agent, blobs: files, uploads, bus, clock });
  registerScriptOperations(operationKinds, { db: database.db, hub, uploads, healthTimeoutS: config.scriptHealthTimeoutS, stableS: config.scriptStableS, log });
  const deviceRelay = new DeviceRelay(
    { hub, links: agents, bus, calls, db: database.db, log: replicaLog, shared: Boolean(config.databaseUrl) },
    { ...DEFAULT_STREAM_RELAY_OPTIONS, clock },
    {
      ...DEFAULT_CAMERA_RELAY_OPTIONS,
      clock,
      lingerMs: config.cameraLingerMs,
      timeoutMs: config.relayTimeoutMs,
      maxViewersPerCamera: config.cameraMaxViewers,
      maxViewersPerUser: config.cameraMaxViewersPerUser,
      maxPendingBytes: config.cameraMaxPendingBytes,
    },
  );
  const telemetry = new BoardTelemetryService({ db: database.db, hub, log: log.child({ component: 'telemetry' }), clock });
  const metrics = new ServerMetrics(
    {
      boardsOnline: () => agents.onlineCount(),
      sseClients: () => operationStreams.totalClients() + deviceRelay.streams.totalClients(),
      boardTelemetry: () => telemetry.gauges(),
      boardHealth: () => boardHealthSamples(database.db),
    },
    { replicaId: config.replicaId },
  );
  const stopCountingEnds = onOperationEnded(bus, (op) => metrics.countOperationEnded(op.kind, op.status));
  hub.countStreamBytes = (direction, bytes, wireBytes) => metrics.countStreamBytes(direction, bytes, wireBytes);

  // The results folder and the content store exist from the start; leftovers of a crash go.
  await fs.mkdir(config.resultsDir, { recursive: true });
  await contentPins?.start();
  await sweepContentStore(store);
  await pgBus?.start();
  // The embedded database has one process: every session row is a leftover of an earlier run.
  await sessions.start({ exclusive: !config.databaseUrl });
  pgBus?.onResync(() => {
    operations.resync().catch((err: unknown) => replicaLog.warn({ err }, 'could not look at the queues again'));
    calls.resync().catch((err: unknown) => replicaLog.warn({ err }, 'could not look at the board calls again'));
  });
  await operations.recover();
  const scheduler = new FleetScheduler({
    store: new PgSchedulerStore({ db: database.db, operations, sessionStaleMs: sessions.staleMs, queueTimeoutMs: config.queueTimeoutMs, clock }),
    bus,
    attach: (hooks) => (operations.scheduling = hooks),
    log: log.child({ component: 'scheduler' }),
    sweepMs: config.schedulerSweepMs,
    clock,
  });
  scheduler.start();
  const boardLost = new BoardLostWatch({ db: database.db, clock, links: agents, operations, log: log.child({ component: 'board-lost' }), lostMs: config.boardLostMs });
  boardLost.start();
  // Several replicas: server-side runs of a replica that died are settled by the others.
  const orphanWatch = config.databaseUrl
    ? clock.setInterval(() => {
        operations.settleOrphanedRuns().catch((err: unknown) => replicaLog.warn({ err }, 'could not look for runs of dead replicas'));
      }, 15_000)
    : undefined;
  orphanWatch?.unref();
  const power = new Power({ db: database.db, operations });
  const rollouts = new Rollouts({ ...store, operations, kinds: operationKinds, agents, bus, clock, power });
  const rolloutStreams = new RolloutEventStreams({ rollouts, bus }, { clock, ...DEFAULT_OPERATION_STREAM_OPTIONS });
  rollouts.start();
  const resumableUploads = new ResumableUploads(store, clock);
  resumableUploads.start();
  const auth = new AuthService(config, database, log, clock);
  auth.start();
  const terminalSessions = new TerminalStore(database.db);
  // Sessions a previous run of this replica left open (it stopped without ending them).
  await terminalSessions.closeLeftovers(config.databaseUrl ? config.replicaName : undefined, new Date(clock.now()));
  // The reservations service is handed in below, once it exists (`terminals.reservations`).
  const terminals = new TerminalRelay({
    hub,
    links: agents,
    store: terminalSessions,
    audit: auth.audit,
    log: log.child({ component: 'terminal' }),
    replicaId: config.replicaName,
    recordingMaxBytes: config.terminalRecordingMaxBytes,
    clock,
  });
  const retention = new RetentionPruner({
    db: database.db,
    log: log.child({ component: 'retention' }),
    retentionMs: config.retentionMs,
    sweepContent: async () => {
      await contentPins?.sweep().catch((err: unknown) => log.warn({ err }, 'could not sweep the content pins'));
      return (await sweepOrphanContent(store)).files;
    },
    onPruned: (kind, n) => metrics.countPruned(kind, n),
    pruneTelemetry: (cutoff, limit) => pruneTelemetryBatch(database.db, cutoff, limit),
    pruneTerminalSessions: (cutoff, limit) => terminalSessions.prune(cutoff, limit),
    telemetryKeepMs: TELEMETRY_KEEP_MS,
    clock,
  });
  retention.start();
  const reservations = new Reservations({
    db: database.db,
    bus,
    clock,
    log: log.child({ component: 'reservations' }),
    maxDurationS: config.reservationMaxS,
    sessionStaleMs: sessions.staleMs,
    onGranted: () => {
      scheduler.boardChanged().catch((err: unknown) => log.warn({ err }, 'could not release work assigned to a reserved board'));
    },
    onFreed: (boardId) => scheduler.kick({ boardId }),
  });
  reservations.start();
  // An operator opens a terminal on a board they hold (docs/terminal.md).
  terminals.reservations = reservations;
  // The holder of a board's reservation may switch its power too (docs/power.md).
  power.useAccess({ mayControl: (principal, boardId) => reservations.holds(principal.userId, boardId) });
  const boards = new Boards({
    db: database.db,
    log,
    sessionStaleMs: sessions.staleMs,
    links: agents,
    work: operations,
    revoke: (boardId) => hub.revoke(boardId),
    changed: () => scheduler.boardChanged(),
    reservations,
  });
  const provisioningKeys = new ProvisioningKeys({
    db: database.db,
    log,
    audit: auth.audit,
    clock,
    isLinked: async (boardId) => (await agents.statusAnywhere(boardId)) !== 'offline',
  });
  const deviceScripts = new DeviceScripts(store);
  const results = new Results({ db: database.db, emit: (type, data, opts) => webhooks.emit(type, data, opts) });
  await webhooks.start();
  const healthChecks = new HealthChecks({
    db: database.db,
    queueTimeoutMs: config.queueTimeoutMs,
    sessionStaleMs: sessions.staleMs,
    requireInvocation: (id) => requireInvocation(store, id),
    createOperation: (input) => operations.create(input),
    defined: () => scheduler.kick(),
  });
  const recovery = new Recovery({
    db: database.db,
    clock,
    log: log.child({ component: 'recovery' }),
    settings: config.power,
    sessionStaleMs: sessions.staleMs,
    agents,
    operations,
    healthChecks: { runHealthChecksNow: (boardId) => healthChecks.runNow(boardId) },
    emit: (type, data, emitOpts) => webhooks.emit(type, data, emitOpts),
    observeRecovery: (seconds) => metrics.observeRecovery(seconds),
  });
  recovery.start();

  return {
    ...store,
    results,
    version: SERVER_VERSION,
    bus,
    sessions,
    agents,
    hub,
    uploads,
    operationKinds,
    operations,
    operationStreams,
    rollouts,
    rolloutStreams,
    archives,
    deviceRelay,
    resumableUploads,
    auth,
    telemetry,
    metrics,
    retention,
    scheduler,
    healthChecks,
    clock,
    boards,
    provisioningKeys,
    deviceScripts,
    pacLists: new PacLists({ db: database.db, clock, operations }),
    pingDatabase: () => database.ping(),
    accelerators: new AcceleratorService({ db: database.db, agents, log: log.child({ component: 'accelerators' }) }),
    webhooks,
    reservations,
    terminals,
    terminalSessions,
    power,
    recovery,
    async shutdown(step = (_name: string) => {}) {
      auth.stop();
      step('terminals');
      await terminals.close();
      step('reservations');
      await reservations.stop();
      step('recovery');
      await recovery.stop();
      step('scheduler');
      await scheduler.stop();
      await boardLost.stop();
      step('retention');
      await retention.stop();
      step('webhooks');
      await webhooks.stop();
      // Appends still streaming stop (their bytes so far are kept for a resume).
      step('resumable uploads');
      await resumableUploads.close();
      // Event streams end first, so the server does not wait for their connections to close.
      deviceRelay.close();
      operationStreams.close();
      rolloutStreams.close();
      step('rollouts');
      await rollouts.stop();
      clock.clearInterval(orphanWatch);
      operations.stop();
      // Links close with 1001 so agents reconnect to the next server; then what was held back is stored.
      step('agent links');
      await hub.shutdown();
      step('operations still settling');
      await operations.drain();
      step('device relay');
      await deviceRelay.stop();
      step('board sessions');
      await sessions.stop();
      step('event bus');
      await pgBus?.close();
      stopCountingEnds();
      metrics.close();
      files.close?.();
    },
  };
}
