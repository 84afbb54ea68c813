import type { Socket } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What the metrics read at scrape time from the services that own the numbers. */
export interface MetricSources {
  /** Boards with a live link now. */
  boardsOnline(): number;
  /** Clients of every SSE stream now (operation events, device-script streams). */
  sseClients(): number;
  /** The latest telemetry of the boards whose link this replica holds (board telemetry). */
  boardTelemetry?(): BoardTelemetryGauges[];
  /** Each board's health (fleet/board-health-metric.ts), read from the database at scrape time. */
  boardHealth?(): Promise<Array<{ board: string; health: string }>>;
}

/** One board's latest readings, for `mm_board_temperature_celsius` and `mm_board_power_watts`. */
export interface BoardTelemetryGauges {
  /** The board's id (stable across renames; names may repeat). */
  board: string;
  temperatures_c: Record<string, number>;
  power_w?: number;
}

export interface ServerMetricsOptions {
  /** The `replica` label of every metric (MM_REPLICA_ID), when set. */
  replicaId?: string | undefined;
}

/** Route label of a request that matched no route (the raw path is never a label). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The control plane's Prometheus metrics, in a registry of its own (prom-client's global
 * default registry is module state: two servers in one process, as in tests, would share
 * and double-register it). Built once by the composition root; the HTTP middleware, the
 * agent link route and the operations (countOperationEnded) feed it; `GET /api/metrics/` renders it.
 */
/** prom-client default gauges whose names end in `_total`, which `promtool check metrics` rejects. */
const PROMTOOL_REJECTED_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly operationsEnded: Counter<'kind' | 'status'>;
  private readonly retentionPruned: Counter<'kind'>;
  private readonly recoverySeconds: Histogram;
  private readonly streamBytes: Counter<'direction' | 'measure'>;
  private readonly linkBytes = { received: 0, sent: 0 };
  /** Sockets of the agent links that are open now: their counts are read live at scrape time. */
  private readonly liveLinks = new Set<Socket>();

  constructor(sources: MetricSources, opts: ServerMetricsOptions = {}) {
    if (opts.replicaId) this.registry.setDefaultLabels({ replica: opts.replicaId });
    // Process CPU, memory, handles, GC, and event-loop delay (nodejs_eventloop_lag_*).
    collectDefaultMetrics({ register: this.registry });
    // promtool rejects a gauge named `…_total`; the same counts are in the by-type gauges
    // `nodejs_active_{handles,requests,resources}` (sum them for the total).
    for (const name of PROMTOOL_REJECTED_DEFAULTS) this.registry.removeSingleMetric(name);

    this.httpDuration = new Histogram({
      name: 'mm_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status: time until the response started (streamed bodies excluded)',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [this.registry],
    });
    this.recoverySeconds = new Histogram({
      name: 'mm_board_recovery_seconds',
      help: 'Boards recovered without a person (docs/power.md): time from the hang to back in service (health checks passed)',
      buckets: [15, 30, 60, 120, 180, 300, 600, 900, 1800, 3600, 7200],
      registers: [this.registry],
    });
    this.operationsEnded = new Counter({
      name: 'mm_operations_total',
      help: 'Operations that ended, by kind and final status',
      labelNames: ['kind', 'status'],
      registers: [this.registry],
    });
    this.retentionPruned = new Counter({
      name: 'mm_retention_pruned_total',
      help: 'What retention removed: old finished operations, their events, stored content nothing records',
      labelNames: ['kind'],
      registers: [this.registry],
    });
    new Gauge({
      name: 'mm_boards_online',
      help: 'Boards with a live agent link',
      registers: [this.registry],
      collect() {
        this.set(sources.boardsOnline());
      },
    });
    new Gauge({
      name: 'mm_sse_clients',
      help: 'Clients of server-sent event streams (operation events and device-script streams)',
      registers: [this.registry],
      collect() {
        this.set(sources.sseClients());
      },
    });
    // Each replica exports the boards linked to it (the series carry its `replica` label), so a
    // board is exported once; a board whose link closed here is gone from the next scrape.
    const telemetry = () => sources.boardTelemetry?.() ?? [];
    new Gauge({
      name: 'mm_board_temperature_celsius',
      help: "Each board's latest temperature by sensor (hwmon name and input), as its agent last sent it",
      labelNames: ['board', 'sensor'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const b of telemetry()) for (const [sensor, celsius] of Object.entries(b.temperatures_c)) this.set({ board: b.board, sensor }, celsius);
      },
    });
    new Gauge({
      name: 'mm_board_power_watts',
      help: "Each board's latest power draw (its ina260 monitors), where it measures one",
      labelNames: ['board'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const b of telemetry()) if (b.power_w !== undefined) this.set({ board: b.board }, b.power_w);
      },
    });
    this.streamBytes = new Counter({
      name: 'mm_agent_link_stream_bytes_total',
      help:
        'File streams over agent links (transfers, output videos, relayed bodies) once each ended, by direction as seen by the server: ' +
        'measure="file" counts file bytes, measure="wire" the payload bytes that crossed the link for them (fewer when compressed)',
      labelNames: ['direction', 'measure'],
      registers: [this.registry],
    });
    if (sources.boardHealth) {
      const read = sources.boardHealth;
      new Gauge({
        name: 'mm_board_health',
        help: 'Health of each board (label board: its id): 1 for its current health (unknown, good or bad), 0 for the others',
        labelNames: ['board', 'health'],
        registers: [this.registry],
        async collect() {
          this.reset();
          for (const { board, health } of await read()) {
            for (const h of ['unknown', 'good', 'bad']) this.set({ board, health: h }, h === health ? 1 : 0);
          }
        },
      });
    }
    const linkBytes = (direction: 'received' | 'sent') => this.linkBytesTotal(direction);
    new Counter({
      name: 'mm_agent_link_bytes_total',
      help: "Bytes moved over agent links (the links' TCP bytes, framing included), by direction as seen by the server",
      labelNames: ['direction'],
      registers: [this.registry],
      collect() {
        // A counter cannot be set: reset, then add the running total (it only ever grows).
        this.reset();
        this.inc({ direction: 'received' }, linkBytes('received'));
        this.inc({ direction: 'sent' }, linkBytes('sent'));
      },
    });
  }

  /** An operation of this replica ended. */
  countOperationEnded(kind: string, status: string): void {
    this.operationsEnded.inc({ kind, status });
  }

  /** A board recovered from a hang: seconds from the hang to back in service (its incident's MTTR). */
  observeRecovery(seconds: number): void {
    this.recoverySeconds.observe(seconds);
  }

  /** One answered request; `route` is the matched route's pattern (or UNMATCHED_ROUTE). */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpDuration.observe({ method, route, status: String(status) }, seconds);
  }

  /** A file stream of an agent link ended: its file bytes and the payload bytes on the wire for them. */
  countStreamBytes(direction: 'received' | 'sent', bytes: number, wireBytes: number): void {
    this.streamBytes.inc({ direction, measure: 'file' }, bytes);
    this.streamBytes.inc({ direction, measure: 'wire' }, wireBytes);
  }

  /** Retention removed `n` rows or files of a kind. */
  countPruned(kind: 'operations' | 'operation_events' | 'content' | 'board_telemetry' | 'rollouts' | 'rollout_boards' | 'terminal_sessions', n: number): void {
    this.retentionPruned.inc({ kind }, n);
  }

  /** Counts the bytes of an agent link's socket (upgrade request included) until it closes. */
  trackAgentLink(socket: Socket): void {
    if (this.liveLinks.has(socket)) return;
    this.liveLinks.add(socket);
    socket.once('close', () => {
      this.linkBytes.received += socket.bytesRead;
      this.linkBytes.sent += socket.bytesWritten;
      this.liveLinks.delete(socket);
    });
  }

  private linkBytesTotal(direction: 'received' | 'sent'): number {
    let total = this.linkBytes[direction];
    for (const s of this.liveLinks) total += direction === 'received' ? s.bytesRead : s.bytesWritten;
    return total;
  }

  /** The text exposition format (`Content-Type` in `contentType`). */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Shutdown. */
  close(): void {
    this.registry.clear();
  }
}
