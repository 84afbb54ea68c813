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
import { registerAgentUpdateKind } from './agent-update/agent-update-kind.ts';
import { Rollouts } from './rollouts/rollouts.ts';
import { RolloutEventStreams } from './rollouts/rollout-event-streams.ts';
import { registerScriptOperations } from './device-scripts/script-operations.ts';
import { RetentionPruner } from './retention/retention-pruner.ts';
import { BoardTelemetryService } from './telemetry/board-telemetry.ts';
import { pruneTelemetryBatch, TELEMETRY_KEEP_MS } from './telemetry/telemetry-store.ts';
import { discardIngestedContent, sweepContentStore, sweepOrphanContent } from './services/invocation-files.ts';
import type { StoreContext } from './store-context.ts';
import type { BlobStore } from './storage/blob-store.ts';
import { createBlobStore } from './storage/create-blob-store.ts';
import { ResumableUploads } from './uploads/resumable-uploads.ts';
import { SERVER_VERSION } from './version.ts';

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
  registerPacKinds(operationKinds, { db: database.db, agents, bus, archives, rebootTimeoutMs: config.rebootTimeoutMs });
  registerAgentUpdateKind(operationKinds, { db: database.db, agents, uploads, packagesDir: config.packagesDir, timeoutMs: config.agentUpdateTimeoutMs });
  for (const [kind, definition] of Object.entries(opts.operationKinds ?? {})) operationKinds.register(kind, definition);
  const hub = new AgentHub({ config, log, db: database.db, links: agents, work: operations.agent, blobs: files, uploads, bus, clock });
  registerScriptOperations(operationKinds, { db: database.db, hub, uploads, healthTimeoutS: config.scriptHealthTimeoutS, log });
  const deviceRelay = new DeviceRelay(
    { hub, links: agents, bus, calls, db: database.db, log: replicaLog, shared: Boolean(config.databaseUrl) },
    { ...DEFAULT_STREAM_RELAY_OPTIONS, clock },
    { ...DEFAULT_CAMERA_RELAY_OPTIONS, clock, lingerMs: config.cameraLingerMs, timeoutMs: config.relayTimeoutMs },
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
    db: database.db,
    bus,
    operations,
    log: log.child({ component: 'scheduler' }),
    sessionStaleMs: sessions.staleMs,
    queueTimeoutMs: config.queueTimeoutMs,
    sweepMs: config.schedulerSweepMs,
    clock,
  });
  scheduler.start();
  // Several replicas: server-side runs of a replica that died are settled by the others.
  const orphanWatch = config.databaseUrl
    ? clock.setInterval(() => {
        operations.settleOrphanedRuns().catch((err: unknown) => replicaLog.warn({ err }, 'could not look for runs of dead replicas'));
      }, 15_000)
    : undefined;
  orphanWatch?.unref();
  const rollouts = new Rollouts({ ...store, operations, kinds: operationKinds, agents, bus, clock });
  const rolloutStreams = new RolloutEventStreams({ rollouts, bus }, { clock, ...DEFAULT_OPERATION_STREAM_OPTIONS });
  rollouts.start();
  const resumableUploads = new ResumableUploads(store);
  resumableUploads.start();
  const auth = new AuthService(config, database, log);
  auth.start();
  const retention = new RetentionPruner({
    db: database.db,
    log: log.child({ component: 'retention' }),
    retentionMs: config.retentionMs,
    sweepContent: async () => (await sweepOrphanContent(store)).files,
    onPruned: (kind, n) => metrics.countPruned(kind, n),
    pruneTelemetry: (cutoff, limit) => pruneTelemetryBatch(database.db, cutoff, limit),
    telemetryKeepMs: TELEMETRY_KEEP_MS,
  });
  retention.start();

  return {
    ...store,
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
    async shutdown(step = (_name: string) => {}) {
      auth.stop();
      step('scheduler');
      await scheduler.stop();
      step('retention');
      await retention.stop();
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
