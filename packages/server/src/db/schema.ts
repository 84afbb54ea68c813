import type { FileRef, PacRecord } from '@mm/protocol';
import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  check,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  serial,
  text,
  timestamp,
  uniqueIndex,
  uuid,
  type AnyPgColumn,
} from 'drizzle-orm/pg-core';

/** What an agent operation's `op.start` carries besides its id and kind (the invocation's name and its input files). */
export interface AgentStart {
  invocation_name: string;
  files: FileRef[];
  /** execute: the board's labels when it started (the runner's MM_BOARD_LABELS). */
  board_labels?: Record<string, string>;
  /** execute: the invocation's `requires_app` (docs/accelerators.md). */
  requires_app?: string;
  /** execute: the DPU fingerprints of its xmodel's DPU subgraphs. */
  model_fingerprints?: string[];
  /** execute: how many counted and warm-up runs (docs/results.md); absent: one run. */
  run?: { repeat: number; warmup: number };
  /** execute: what the run depends on, as the board was when it started (kept here, not sent). */
  context?: RunContext;
}

/** What an execute's result depends on (`result.context`, docs/results.md). */
export interface RunContext {
  files: Record<string, string>;
  board_id: string | null;
  board_model: string | null;
  active_pac: string | null;
  app: string | null;
  dpu_fingerprint: string | null;
  dpu_mhz: number | null;
  agent_version: string | null;
  runner_version: string | null;
  start_temperature_c: number | null;
}

/** What the server read of an uploaded `.xmodel` weights file (docs/accelerators.md). */
export interface ModelSummary {
  format: 'xmodel';
  dpu_subgraphs: Array<{ name: string; dpu_fingerprint: string | null; dpu_name: string | null }>;
  inputs: Array<{ name: string; shape: number[]; dtype: string }>;
}

/** A board's telemetry as the API shows it (`at`: when the server received it). */
export interface TelemetrySample {
  at: string;
  temperatures_c: Record<string, number>;
  power_w?: number;
  memory_used_bytes: number;
  load_1m: number;
  disk_free_bytes: number;
}

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

/** Stored file content, addressed by its sha256. The bytes live in the file store. */
export const contents = pgTable('contents', {
  sha256: text('sha256').primaryKey(),
  size: bigint('size', { mode: 'number' }).notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
});

export const invocations = pgTable(
  'invocations',
  {
    id: serial('id').primaryKey(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    /** The accelerated application its runs need (docs/accelerators.md); loaded first when not active. */
    requiresApp: text('requires_app'),
  },
  (t) => [index('invocations_created_at_idx').on(t.createdAt)],
);

/** One file per (invocation, kind); a new upload of a kind replaces the row. */
export const invocationFiles = pgTable(
  'invocation_files',
  {
    invocationId: integer('invocation_id')
      .notNull()
      .references(() => invocations.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    filename: text('filename').notNull(),
    size: bigint('size', { mode: 'number' }).notNull(),
    sha256: text('sha256')
      .notNull()
      .references(() => contents.sha256),
    contentType: text('content_type').notNull(),
    uploadedAt: ts('uploaded_at').notNull().defaultNow(),
    /** A `.xmodel` weights file: what the server read of it (its DPU subgraphs, its inputs). */
    model: jsonb('model').$type<ModelSummary>(),
  },
  (t) => [primaryKey({ columns: [t.invocationId, t.kind] }), index('invocation_files_sha256_idx').on(t.sha256)],
);

export const boards = pgTable(
  'boards',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    name: text('name').notNull(),
    /** sha256 of the board token; the token itself is shown once and never stored. */
    tokenHash: text('token_hash').notNull().unique(),
    createdAt: ts('created_at').notNull().defaultNow(),
    lastSeenAt: ts('last_seen_at'),
    connectedAt: ts('connected_at'),
    agentVersion: text('agent_version'),
    hostname: text('hostname'),
    platform: text('platform'),
    bootId: text('boot_id'),
    activePac: text('active_pac'),
    /** Content the agent reported holding in its cache (sha256 list), from its last hello. */
    cachedContent: jsonb('cached_content').$type<string[]>().notNull().default([]),
    /** `{ key: value }` labels (an enrolled board starts with its provisioning key's). */
    labels: jsonb('labels').$type<Record<string, string>>().notNull().default({}),
    /** Enrolled with a manual-approval key and not approved yet: no token works for it. */
    pending: boolean('pending').notNull().default(false),
    /** Enrolled boards: the agent's machine id and the key it enrolled with (one board per key and machine). */
    machineId: text('machine_id'),
    provisioningKeyId: uuid('provisioning_key_id').references(() => provisioningKeys.id, { onDelete: 'set null' }),
    /** What the agent reported when it enrolled. */
    enrollFacts: jsonb('enroll_facts').$type<Record<string, unknown>>(),
    /** Enrolled boards: the address its enrolment came from (shown in the approval list). */
    enrolledFrom: text('enrolled_from'),
    /** The latest telemetry sample the agent sent (`board.telemetry`, stamped on arrival). */
    telemetry: jsonb('telemetry').$type<TelemetrySample>(),
    /** What the agent found on the board, from its last hello or `board.facts` (boards/board-facts.ts). */
    facts: jsonb('facts').$type<Record<string, unknown>>(),
    /** Fleet (docs/fleet.md): a board under repair takes no selector work. */
    maintenance: boolean('maintenance').notNull().default(false),
    /** `unknown` (never checked) | `good` | `bad`, set by its health checks. */
    health: text('health').$type<'unknown' | 'good' | 'bad'>().notNull().default('unknown'),
    healthReason: text('health_reason'),
    healthCheckedAt: ts('health_checked_at'),
    /** When its last operation ended: the scheduler gives selector work to the board idle longest. */
    idleSince: ts('idle_since'),
    /**
     * The scheduler gave it selector work that has not ended yet: a hint that keeps busy boards
     * out of `boards_idle_idx` (the lock and re-check in fleet/scheduler-store.ts decide).
     */
    schedulerBusy: boolean('scheduler_busy').notNull().default(false),
    /**
     * A re-enrolment held for an admin (enrollment/enroll.ts): someone with the key and the
     * machine id asked for a new token without proving it is the board. `approved` once an
     * admin approved it: the next enroll call gets the token, once.
     */
    reenroll: jsonb('reenroll').$type<ReenrollRequest>(),
    /** Power control (docs/power.md): the lab host that relays to pdudaemon, and the PDU's name and port there. */
    power: jsonb('power').$type<BoardPower>(),
    /** `off` after a power_off (hang detection leaves it alone), `on` after power_on/power_cycle; null: never switched. */
    powerState: text('power_state').$type<'on' | 'off'>(),
    /** When a power operation last started or ended: a board booting after it is not hung (MM_HANG_DETECT_S from then). */
    powerChangedAt: ts('power_changed_at'),
    /** Its last link ended with the agent's goodbye (close 1000): an agent stopped on purpose is not a hang. */
    linkGoodbye: boolean('link_goodbye').notNull().default(false),
    /** Set while an incident is open (power/): the board shows `unresponsive`. */
    unresponsiveSince: ts('unresponsive_since'),
    /** Its PACs as the last `pac_query` (or install, or activation's check) listed them (pacs/pac-lists.ts), and when. */
    pacs: jsonb('pacs').$type<PacRecord[]>(),
    pacsListedAt: ts('pacs_listed_at'),
  },
  (t) => [
    uniqueIndex('boards_key_machine_idx').on(t.provisioningKeyId, t.machineId),
    // Board names are unique (`board_name_taken`): `mm boards show <name>` names one board.
    uniqueIndex('boards_name_idx').on(t.name),
    // Selectors and `?label=` filters: `labels @> '{...}'`.
    index('boards_labels_idx').using('gin', t.labels),
    // The scheduler's idle boards, longest idle first, without reading the busy ones.
    index('boards_idle_idx')
      .on(sql`coalesce(${t.idleSince}, ${t.createdAt})`)
      .where(sql`not ${t.pending} and not ${t.maintenance} and ${t.health} <> 'bad' and not ${t.schedulerBusy}`),
  ],
);

/** A board's power controller (docs/power.md): `controller_board_id` relays to its pdudaemon, which knows the PDU by `pdu_hostname`. */
export interface BoardPower {
  controller_board_id: string;
  pdu_hostname: string;
  pdu_port: number;
}

/** One step of an incident's recovery (power/incidents.ts). */
export interface IncidentAction {
  at: string;
  action: 'power_cycle' | 'health_check';
  operation_ids: number[];
  outcome?: string;
}

/**
 * A board that stopped answering (power/): from the hang to its return to service (or to
 * `bad`). `phase` drives the recovery: `detected` → `cycling` (a power_cycle runs) →
 * `booting` (waiting for the link) → `checking` (its health checks run) → closed.
 */
export const boardIncidents = pgTable(
  'board_incidents',
  {
    id: serial('id').primaryKey(),
    boardId: uuid('board_id')
      .notNull()
      .references(() => boards.id, { onDelete: 'cascade' }),
    /** When the board was last heard from (the hang began), or when its run passed its bound. */
    startedAt: ts('started_at').notNull(),
    detectedAt: ts('detected_at').notNull(),
    reason: text('reason').notNull(),
    phase: text('phase').$type<'detected' | 'cycling' | 'booting' | 'checking' | 'closed'>().notNull().default('detected'),
    /** When the current phase began (the boot wait is measured from it). */
    phaseAt: ts('phase_at').notNull(),
    actions: jsonb('actions').$type<IncidentAction[]>().notNull().default([]),
    recoveredAt: ts('recovered_at'),
    /** null while open; `recovered` (back in service), `bad` (recovery gave up), `resolved` (a person took over). */
    outcome: text('outcome').$type<'recovered' | 'bad' | 'resolved'>(),
  },
  (t) => [
    index('board_incidents_board_idx').on(t.boardId, t.id),
    uniqueIndex('board_incidents_open_idx')
      .on(t.boardId)
      .where(sql`${t.outcome} is null`),
  ],
);

/** Provisioning keys (docs/enrollment.md): exchanged by an agent for a board token; only the hash is stored. */
export const provisioningKeys = pgTable('provisioning_keys', {
  id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
  name: text('name').notNull(),
  keyHash: text('key_hash').notNull().unique(),
  labels: jsonb('labels').$type<Record<string, string>>().notNull().default({}),
  expiresAt: ts('expires_at'),
  maxBoards: integer('max_boards'),
  /** Boards enrolled with it so far (new machines; re-enrolling one does not count again). */
  enrolledCount: integer('enrolled_count').notNull().default(0),
  approval: text('approval').$type<'auto' | 'manual'>().notNull().default('auto'),
  createdBy: text('created_by'),
  createdAt: ts('created_at').notNull().defaultNow(),
});

export const operations = pgTable(
  'operations',
  {
    id: serial('id').primaryKey(),
    kind: text('kind').notNull(),
    status: text('status').notNull().default('queued'),
    boardId: uuid('board_id').references(() => boards.id, { onDelete: 'set null' }),
    invocationId: integer('invocation_id').references(() => invocations.id, { onDelete: 'set null' }),
    /** What the operation was asked to do (kind-specific); the server's own state is in the columns below. */
    params: jsonb('params').$type<Record<string, unknown>>().notNull().default({}),
    /** Server-side runs: the replica that claimed it (a restart of another replica leaves it alone). */
    runnerReplica: text('runner_replica'),
    /** When a cancel was asked for while it ran: outlives a restart (the board gets op.cancel at its hello). */
    cancelRequestedAt: ts('cancel_requested_at'),
    /** `transfer`/`execute`: what its op.start carries, snapshotted when it started, so a restart sends the same. */
    agentStart: jsonb('agent_start').$type<AgentStart>(),
    createdAt: ts('created_at').notNull().defaultNow(),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
    progress: jsonb('progress')
      .$type<{ phase: string; bytes_done: number; bytes_total: number }>()
      .notNull()
      .default({ phase: 'queued', bytes_done: 0, bytes_total: 0 }),
    result: jsonb('result').$type<unknown>(),
    error: jsonb('error').$type<{ code: string; message: string } | null>(),
    /** Who asked for it: a username, `MM_API_TOKEN`, or null when auth was off. */
    createdBy: text('created_by'),
    /** Fleet scheduling (docs/fleet.md): run on any board whose labels hold these pairs; null when a board was named. */
    boardSelector: jsonb('board_selector').$type<Record<string, string>>(),
    /** −100…100: waiting selector work is taken by priority, then age. */
    priority: integer('priority').notNull().default(0),
    /** Still queued at this time → failed `queue_timeout`. */
    queueDeadline: ts('queue_deadline'),
    /** When the scheduler gave a selector operation its board. */
    assignedAt: ts('assigned_at'),
    /** A health check's run: its board runs it ahead of other queued work; its end sets the board's health. */
    healthCheckId: integer('health_check_id').references((): AnyPgColumn => healthChecks.id, { onDelete: 'set null' }),
    /** Running on a board that went offline: since when (operations/board-lost.ts); after MM_BOARD_LOST_S it fails `board_lost`. */
    boardOfflineSince: ts('board_offline_since'),
  },
  (t) => [
    index('operations_board_status_idx').on(t.boardId, t.status, t.id),
    // The scheduler's waiting selector work, by priority then age.
    index('operations_waiting_idx')
      .on(sql`${t.priority} desc`, t.id)
      .where(sql`${t.status} = 'queued' and ${t.boardId} is null`),
    index('operations_health_check_idx').on(t.healthCheckId, t.boardId, t.id),
    // The distinct selectors of waiting work, one probe each (fleet/scheduler-store.ts waitingSelectors).
    index('operations_waiting_selector_idx')
      .on(t.boardSelector)
      .where(sql`${t.status} = 'queued' and ${t.boardId} is null and ${t.boardSelector} is not null`),
    index('operations_invocation_idx').on(t.invocationId, t.id),
    // The sweep's queue timeouts and stranded assignments: read the few rows concerned, not all queued work.
    index('operations_queue_deadline_idx')
      .on(t.queueDeadline)
      .where(sql`${t.status} = 'queued'`),
    // The boards with queued work (the sweep's resync, a restart): read the boards' queues, not
    // the waiting selector work, which may be thousands of rows.
    index('operations_board_queued_idx')
      .on(t.boardId)
      .where(sql`${t.status} = 'queued' and ${t.boardId} is not null`),
    index('operations_assigned_waiting_idx')
      .on(t.boardId)
      .where(sql`${t.status} = 'queued' and ${t.boardSelector} is not null and ${t.boardId} is not null`),
    // The retention pruner's `coalesce(finished_at, created_at) < cutoff`: its hourly pass
    // finds the few expired rows without reading the table (bench/operation-indexes.ts).
    index('operations_expiry_idx').on(sql`coalesce(${t.finishedAt}, ${t.createdAt})`),
    // `GET /api/operations/?status=` and `?kind=` (page newest first, and the count).
    index('operations_status_idx').on(t.status, t.id),
    index('operations_kind_idx').on(t.kind, t.id),
  ],
);

/** Fleet health checks (docs/fleet.md): an invocation run on every matching board every `interval_s`. */
export const healthChecks = pgTable('health_checks', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
  invocationId: integer('invocation_id')
    .notNull()
    .references(() => invocations.id, { onDelete: 'cascade' }),
  boardSelector: jsonb('board_selector').$type<Record<string, string>>().notNull().default({}),
  intervalS: integer('interval_s').notNull(),
  /** `{ metrics: { name: { min?, max? } } }` */
  expect: jsonb('expect').$type<{ metrics?: Record<string, { min?: number; max?: number }> }>().notNull().default({}),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/** One counted run of a baseline: which operation and board, and its metrics. */
export interface BaselineRun {
  operation_id: number;
  board_id: string | null;
  metrics: Record<string, number>;
}

/**
 * Named baselines (docs/results.md): the runs of some execute operations, copied in when it was
 * saved, so that retention deleting the operations leaves the baseline whole.
 */
export const baselines = pgTable('baselines', {
  id: serial('id').primaryKey(),
  name: text('name').notNull().unique(),
  invocationId: integer('invocation_id').references(() => invocations.id, { onDelete: 'set null' }),
  operationIds: jsonb('operation_ids').$type<number[]>().notNull(),
  runs: jsonb('runs').$type<BaselineRun[]>().notNull(),
  /** Each operation's `result.context`, by operation id. */
  contexts: jsonb('contexts').$type<Record<string, RunContext>>().notNull().default({}),
  createdBy: text('created_by'),
  createdAt: ts('created_at').notNull().defaultNow(),
});

/** Every status/progress/log event of an operation, in order: the SSE replay and the log. */
export const operationEvents = pgTable(
  'operation_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    operationId: integer('operation_id')
      .notNull()
      .references(() => operations.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    type: text('type').notNull(),
    data: jsonb('data').$type<unknown>().notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('operation_events_op_seq_idx').on(t.operationId, t.seq)],
);

export const deviceScripts = pgTable(
  'device_scripts',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    name: text('name').notNull(),
    deviceType: text('device_type').notNull(),
    description: text('description').notNull().default(''),
    scriptFilename: text('script_filename').notNull(),
    remoteDir: text('remote_dir').notNull(),
    port: integer('port').notNull(),
    version: text('version').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('device_scripts_type_idx').on(t.deviceType)],
);

/** Small key/value facts the server keeps about itself (e.g. whether seeding ran). */
export const meta = pgTable('meta', {
  key: text('key').primaryKey(),
  value: jsonb('value').$type<unknown>().notNull(),
});

/**
 * A resumable (tus) upload in progress: its bytes so far are in `MM_DATA_DIR/uploads/<id>.part`.
 * When the last byte arrives the file is attached and the row goes; abandoned rows (and their
 * bytes) go once `expires_at` passes.
 */
export const uploads = pgTable(
  'uploads',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    /** Null: content uploaded on its own (a PAC archive for a rollout), stored by sha256, attached to nothing. */
    invocationId: integer('invocation_id').references(() => invocations.id, { onDelete: 'cascade' }),
    /** The input file kind; `content` for an upload without an invocation. */
    kind: text('kind').notNull(),
    filename: text('filename').notNull(),
    /** The declared sha256 (Upload-Metadata), checked when the last byte arrives. */
    sha256: text('sha256'),
    /** Upload-Metadata as sent, echoed on HEAD as the protocol asks. */
    metadata: text('metadata').notNull(),
    length: bigint('length', { mode: 'number' }).notNull(),
    /** Bytes durably written to the part file (fsynced before this moves). */
    offset: bigint('offset', { mode: 'number' }).notNull().default(0),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    /** Set when the last byte arrived and the file was attached: kept until it expires, so HEAD still answers (tus). */
    finishedAt: ts('finished_at'),
  },
  (t) => [index('uploads_expires_at_idx').on(t.expiresAt)],
);

/** People who sign in (auth/users.ts). The password is an scrypt hash with its salt and parameters. */
export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    username: text('username').notNull(),
    role: text('role').notNull(),
    passwordHash: text('password_hash').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('users_username_lower_idx').on(sql`lower(${t.username})`)],
);

/** Personal API tokens: only the sha256 of the token is stored; they go with their user. */
export const apiTokens = pgTable(
  'api_tokens',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    tokenHash: text('token_hash').notNull().unique(),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at'),
    lastUsedAt: ts('last_used_at'),
  },
  (t) => [index('api_tokens_user_idx').on(t.userId)],
);

/** Browser sessions (cookie `mm_session`): only the sha256 of the cookie value is stored. */
export const sessions = pgTable(
  'sessions',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    /** The person; null for a session opened with MM_API_TOKEN (see envTokenHash). */
    userId: uuid('user_id').references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull().unique(),
    /**
     * A session opened with a personal token lives no longer than the token: revoking it
     * deletes the session with it (so a dashboard signed in with a token can still load
     * videos, ZIPs and logs, which are plain GETs that carry only the cookie).
     */
    apiTokenId: uuid('api_token_id').references(() => apiTokens.id, { onDelete: 'cascade' }),
    /** A session opened with MM_API_TOKEN: the sha256 of that token; it ends when the setting changes. */
    envTokenHash: text('env_token_hash'),
    createdAt: ts('created_at').notNull().defaultNow(),
    lastSeenAt: ts('last_seen_at').notNull().defaultNow(),
    /** Absolute end, whatever the activity. */
    expiresAt: ts('expires_at').notNull(),
    ip: text('ip'),
  },
  (t) => [
    index('sessions_user_idx').on(t.userId),
    index('sessions_api_token_idx').on(t.apiTokenId),
    check('sessions_owner', sql`${t.userId} IS NOT NULL OR ${t.envTokenHash} IS NOT NULL`),
  ],
);

/** Failed sign-ins, counted per username and per address for the rate limit (shared by replicas). */
export const loginFailures = pgTable(
  'login_failures',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    username: text('username').notNull(),
    ip: text('ip').notNull(),
    at: ts('at').notNull().defaultNow(),
  },
  (t) => [index('login_failures_username_idx').on(t.username, t.at), index('login_failures_ip_idx').on(t.ip, t.at)],
);

/** Append-only record of every change (auth/audit.ts only inserts and reads). */
export const auditEvents = pgTable(
  'audit_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: ts('at').notNull().defaultNow(),
    /** The acting user's id (no foreign key: the record outlives the user). */
    userId: uuid('user_id'),
    username: text('username'),
    action: text('action').notNull(),
    target: text('target'),
    ip: text('ip'),
    requestId: text('request_id'),
    detail: jsonb('detail').$type<Record<string, unknown>>(),
    /** How many identical consecutive actions this entry stands for (a servo drag is one entry). */
    count: integer('count').notNull().default(1),
    /** When the last of them happened (null while count is 1). */
    lastAt: ts('last_at'),
  },
  (t) => [index('audit_events_at_idx').on(t.at), index('audit_events_username_idx').on(t.username, t.at), index('audit_events_action_idx').on(t.action, t.at)],
);

// ── several replicas (docs/replicas.md) ─────────────────────────────────────────────

/**
 * Where each board's agent link lives: one row per connected board, written by the replica
 * holding the link (upserted on a settled hello, heartbeat refreshed, deleted on close). A
 * row whose heartbeat is older than a few intervals belongs to a dead replica: offline.
 */
export const boardSessions = pgTable(
  'board_sessions',
  {
    boardId: uuid('board_id')
      .primaryKey()
      .references(() => boards.id, { onDelete: 'cascade' }),
    replicaId: text('replica_id').notNull(),
    connectedAt: ts('connected_at').notNull(),
    heartbeatAt: ts('heartbeat_at').notNull().defaultNow(),
    bootId: text('boot_id'),
  },
  (t) => [index('board_sessions_replica_idx').on(t.replicaId)],
);

/**
 * Board telemetry kept for plots: one sample per board and minute (the first of the minute),
 * pruned after 24 h by the retention pruner. Bounded: 1,440 rows per board.
 */
export const boardTelemetry = pgTable(
  'board_telemetry',
  {
    boardId: uuid('board_id')
      .notNull()
      .references(() => boards.id, { onDelete: 'cascade' }),
    /** The sample's minute (its time truncated). */
    minute: ts('minute').notNull(),
    sample: jsonb('sample').$type<TelemetrySample>().notNull(),
  },
  (t) => [primaryKey({ columns: [t.boardId, t.minute] }), index('board_telemetry_minute_idx').on(t.minute)],
);

/** A board expected to reboot (PAC activation): every replica shows it `rebooting` until it is back or the wait ends. */
export const boardReboots = pgTable('board_reboots', {
  boardId: uuid('board_id')
    .primaryKey()
    .references(() => boards.id, { onDelete: 'cascade' }),
  /** The replica whose operation waits for the reboot. */
  replicaId: text('replica_id').notNull(),
  /** The boot id before the reboot: a hello with another one means it is back. */
  bootId: text('boot_id'),
  startedAt: ts('started_at').notNull().defaultNow(),
  expiresAt: ts('expires_at').notNull(),
});

/** Raw bytes (both drivers hand back a Uint8Array/Buffer). */
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType() {
    return 'bytea';
  },
});

/**
 * A synchronous call (an agent RPC, or a request for a device script) asked of a board whose link lives on another replica:
 * the asking replica inserts the row, the holder runs it and writes the answer; the asker
 * reads it and deletes the row (expired rows are removed by any replica).
 */
export const boardCalls = pgTable(
  'board_calls',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    boardId: uuid('board_id')
      .notNull()
      .references(() => boards.id, { onDelete: 'cascade' }),
    /** The replica asking (it is told when the answer is in). */
    originReplica: text('origin_replica').notNull(),
    method: text('method').notNull(),
    params: jsonb('params').$type<unknown>().notNull(),
    timeoutMs: integer('timeout_ms').notNull(),
    /** The replica that took the call (only one runs it). */
    claimedBy: text('claimed_by'),
    /** Set by the replica holding the link: its result, or the error it answered ({status, code, message}). */
    answeredAt: ts('answered_at'),
    result: jsonb('result').$type<unknown>(),
    error: jsonb('error').$type<{ status: number; code: string; message: string } | null>(),
    /** A proxied request's body and its answer's (1 MiB at most each). */
    requestBody: bytea('request_body'),
    responseBody: bytea('response_body'),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [index('board_calls_expires_idx').on(t.expiresAt)],
);

/**
 * Device-script streams wanted by a replica whose clients watch a board linked elsewhere: the
 * replica holding the link keeps ONE upstream subscription while any fresh row wants it.
 */
export const relaySubscriptions = pgTable(
  'relay_subscriptions',
  {
    boardId: uuid('board_id')
      .notNull()
      .references(() => boards.id, { onDelete: 'cascade' }),
    scriptId: text('script_id').notNull(),
    replicaId: text('replica_id').notNull(),
    port: integer('port').notNull(),
    path: text('path').notNull(),
    heartbeatAt: ts('heartbeat_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.boardId, t.scriptId, t.replicaId] })],
);

/** What the upstream of a relayed stream sent, for the other replicas' clients (pruned after a minute). */
export const relayEvents = pgTable(
  'relay_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    boardId: uuid('board_id')
      .notNull()
      .references(() => boards.id, { onDelete: 'cascade' }),
    scriptId: text('script_id').notNull(),
    /** The SSE frame as the holder formatted it. */
    frame: bytea('frame').notNull(),
    /** The script's last event id after it (SSE ids stick). */
    lastEventId: text('last_event_id'),
    /** For the relay's own `upstream` events: the state it announces. */
    state: text('state'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('relay_events_stream_idx').on(t.boardId, t.scriptId, t.id), index('relay_events_created_idx').on(t.createdAt)],
);

/**
 * Rollouts (docs/rollouts.md): one operation kind applied to every board a selector matched
 * at creation, in phases, with an automatic abort. Advanced by whichever replica looks
 * (rollouts/rollout-engine.ts); every step is claimed with a conditional UPDATE.
 */
export const rollouts = pgTable(
  'rollouts',
  {
    id: serial('id').primaryKey(),
    kind: text('kind').notNull(),
    /** running | paused | succeeded | failed | aborted | cancelled */
    status: text('status').notNull().default('running'),
    boardSelector: jsonb('board_selector').$type<Record<string, string>>().notNull(),
    invocationId: integer('invocation_id').references(() => invocations.id, { onDelete: 'set null' }),
    params: jsonb('params').$type<Record<string, unknown>>().notNull().default({}),
    batchSize: integer('batch_size'),
    batchIntervalS: integer('batch_interval_s').notNull().default(0),
    abort: jsonb('abort').$type<{ failure_percent: number; min_finished: number } | null>(),
    /** How many phases have been started (0: none yet). */
    phasesStarted: integer('phases_started').notNull().default(0),
    /** When every started phase had ended (the batch interval counts from here); null while one runs. */
    phaseEndedAt: ts('phase_ended_at'),
    createdBy: text('created_by'),
    createdAt: ts('created_at').notNull().defaultNow(),
    /** Set once the status is final and no step is queued or running any more. */
    finishedAt: ts('finished_at'),
    /** Boards the selector matched but the rollout left out (maintenance, `bad`), fixed at creation. */
    leftOut: jsonb('left_out').$type<RolloutLeftOut[]>().notNull().default([]),
  },
  (t) => [index('rollouts_status_idx').on(t.status, t.id), index('rollouts_kind_idx').on(t.kind, t.id)],
);

/** One board of a rollout: its phase, its step operation and the step's outcome. */
export const rolloutBoards = pgTable(
  'rollout_boards',
  {
    rolloutId: integer('rollout_id')
      .notNull()
      .references(() => rollouts.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    boardId: uuid('board_id').references(() => boards.id, { onDelete: 'set null' }),
    /** The board's name when the rollout was created (the board may be renamed or deleted later). */
    boardName: text('board_name').notNull(),
    phase: integer('phase').notNull(),
    /** pending | starting | queued | running | succeeded | failed | cancelled | skipped */
    status: text('status').notNull().default('pending'),
    /** `starting`: the replica creating the step operation, and since when. */
    claimedBy: text('claimed_by'),
    claimedAt: ts('claimed_at'),
    operationId: integer('operation_id').references(() => operations.id, { onDelete: 'set null' }),
    runMs: integer('run_ms'),
    metrics: jsonb('metrics').$type<Record<string, number>>(),
    finishedAt: ts('finished_at'),
  },
  (t) => [primaryKey({ columns: [t.rolloutId, t.position] }), index('rollout_boards_operation_idx').on(t.operationId)],
);

/**
 * The program of each version of a device script (docs/device-scripts.md): stored content
 * by sha256, one row per (script, version), kept when the entry moves to a newer version.
 */
export const deviceScriptPrograms = pgTable(
  'device_script_programs',
  {
    scriptId: uuid('script_id')
      .notNull()
      .references(() => deviceScripts.id, { onDelete: 'cascade' }),
    version: text('version').notNull(),
    sha256: text('sha256')
      .notNull()
      .references(() => contents.sha256),
    size: bigint('size', { mode: 'number' }).notNull(),
    /** The name it was uploaded as (the board writes it as the entry's script_filename). */
    filename: text('filename').notNull(),
    uploadedAt: ts('uploaded_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.scriptId, t.version] }), index('device_script_programs_sha256_idx').on(t.sha256)],
);

/** The device scripts deployed on each board and their states, as its agent last reported them. */
export const boardScripts = pgTable(
  'board_scripts',
  {
    boardId: uuid('board_id')
      .notNull()
      .references(() => boards.id, { onDelete: 'cascade' }),
    /** The catalogue entry's id (not a foreign key: the board keeps running a script whose entry was deleted). */
    scriptId: text('script_id').notNull(),
    name: text('name').notNull(),
    version: text('version').notNull(),
    port: integer('port').notNull(),
    state: text('state').notNull(),
    since: ts('since').notNull(),
    restarts: integer('restarts').notNull().default(0),
    reportedAt: ts('reported_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.boardId, t.scriptId] })],
);

/**
 * The newest frame of each camera relayed to other replicas (docs/replicas.md, *Cameras*):
 * one row per board and script, overwritten by the replica holding the board's link (newest
 * wins), `seq` counted up by every write; or the problem its upstream met (frame null).
 */
export const cameraFrames = pgTable(
  'camera_frames',
  {
    boardId: uuid('board_id')
      .notNull()
      .references(() => boards.id, { onDelete: 'cascade' }),
    scriptId: text('script_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    /** The whole JPEG frame, or null when the row reports a problem. */
    frame: bytea('frame'),
    /** The script's capture time (ms since the epoch), when it said. */
    capturedAt: bigint('captured_at', { mode: 'number' }),
    errorStatus: integer('error_status'),
    errorCode: text('error_code'),
    errorDetail: text('error_detail'),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.boardId, t.scriptId] })],
);

/** A held re-enrolment of a board (boards.reenroll). */
export interface ReenrollRequest {
  hostname: string;
  /** The address it came from. */
  address: string | null;
  requested_at: string;
  approved: boolean;
}

/** A board a rollout's selector matched but left out (rollouts.left_out). */
export interface RolloutLeftOut {
  board_id: string;
  board_name: string;
  reason: 'maintenance' | 'bad';
}

/** Refused enrolments (enrollment/enroll-limiter.ts): counted per address, as failed sign-ins are. */
export const enrollFailures = pgTable(
  'enroll_failures',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    ip: text('ip').notNull(),
    at: ts('at').notNull().defaultNow(),
  },
  (t) => [index('enroll_failures_ip_idx').on(t.ip, t.at), index('enroll_failures_at_idx').on(t.at)],
);

/**
 * Files a run produced besides its output video, kept with its operation (one per kind):
 * `results`, mm-runner's results.jsonl (docs/runner.md). Deleting the operation (retention)
 * deletes the row; the content then goes with the next sweep.
 */
export const operationFiles = pgTable(
  'operation_files',
  {
    operationId: integer('operation_id')
      .notNull()
      .references(() => operations.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    filename: text('filename').notNull(),
    size: bigint('size', { mode: 'number' }).notNull(),
    sha256: text('sha256')
      .notNull()
      .references(() => contents.sha256),
    contentType: text('content_type').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.operationId, t.kind] }), index('operation_files_sha256_idx').on(t.sha256)],
);

// ── webhooks (docs/webhooks.md) ────────────────────────────────────────────────────

/** Where events are POSTed (admin): the URL, the events wanted, the format, the signing secret. */
export const webhookSubscriptions = pgTable('webhook_subscriptions', {
  id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
  url: text('url').notNull(),
  /** The event types wanted (`operation.finished`, …). */
  events: jsonb('events').$type<string[]>().notNull(),
  /** `standard` (`{ type, timestamp, data }`) or `slack` (incoming-webhook blocks). */
  format: text('format').$type<'standard' | 'slack'>().notNull().default('standard'),
  enabled: boolean('enabled').notNull().default(true),
  /** Why the server turned it off (the receiver answered 410 Gone); null when a person did, or it is on. */
  disabledReason: text('disabled_reason'),
  /**
   * The signing secret (`whsec_…`), sealed with the server's webhook key (webhooks/secret-box.ts):
   * the server must sign with it, so it cannot keep only a hash.
   */
  secretSealed: text('secret_sealed').notNull(),
  createdBy: text('created_by'),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/**
 * Events to tell subscribers about, stored before anything is sent. `dedupe_key` names what
 * caused one (`operation.finished:42`): the replicas and sweeps that notice the same cause
 * store it once.
 */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    type: text('type').notNull(),
    dedupeKey: text('dedupe_key'),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    occurredAt: ts('occurred_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('webhook_events_dedupe_idx').on(t.dedupeKey), index('webhook_events_created_idx').on(t.createdAt)],
);

/**
 * One event for one subscription: sent until the receiver answers 2xx, retried with backoff
 * until `give_up_at`. A replica sending it holds a lease (`lease_token`, `lease_until`); one
 * that dies mid-send leaves the lease to expire and another replica sends it again.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    subscriptionId: uuid('subscription_id')
      .notNull()
      .references(() => webhookSubscriptions.id, { onDelete: 'cascade' }),
    eventId: uuid('event_id')
      .notNull()
      .references(() => webhookEvents.id, { onDelete: 'cascade' }),
    /** pending | delivered | failed */
    status: text('status').$type<'pending' | 'delivered' | 'failed'>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    lastAttemptAt: ts('last_attempt_at'),
    nextAttemptAt: ts('next_attempt_at').notNull(),
    /** No retry after this (created or redelivered + MM_WEBHOOK_RETRY_FOR_S). */
    giveUpAt: ts('give_up_at').notNull(),
    leaseToken: uuid('lease_token'),
    leasedBy: text('leased_by'),
    leaseUntil: ts('lease_until'),
    deliveredAt: ts('delivered_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('webhook_deliveries_subscription_idx').on(t.subscriptionId, t.id),
    index('webhook_deliveries_event_idx').on(t.eventId),
    // The workers' claim: the few pending rows, soonest first.
    index('webhook_deliveries_due_idx')
      .on(t.nextAttemptAt)
      .where(sql`${t.status} = 'pending'`),
  ],
);

/**
 * What the webhook sweep last saw of each board (webhooks/board-sweep.ts): a change of
 * `pending` (enrolled), `health`, or presence past the grace period is an event, claimed by
 * one replica with a conditional UPDATE of this row.
 */
export const webhookBoardState = pgTable('webhook_board_state', {
  boardId: uuid('board_id')
    .primaryKey()
    .references(() => boards.id, { onDelete: 'cascade' }),
  pending: boolean('pending').notNull(),
  health: text('health').notNull(),
  /** The board's `connected_at` as the sweep last saw it: a newer one means it was linked since (however briefly). */
  connectedAt: ts('connected_at'),
  /** When the sweep first saw it offline (null while it is linked): `board.offline` once this is older than the grace period. */
  offlineSince: ts('offline_since'),
  /** Told it is offline (or offline when first seen): no new `board.offline` until it is back. */
  offlineNotified: boolean('offline_notified').notNull(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/**
 * Pins on stored content that every replica's collection honours (storage/content-pins.ts):
 * one row per pin a replica holds between putting content into the blob store and recording
 * it in a row (or giving it up). Written only with several replicas possible (a real
 * PostgreSQL); with the embedded database the pins in the process's memory are all there is.
 */
export const contentPins = pgTable(
  'content_pins',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    sha256: text('sha256').notNull(),
    replicaId: text('replica_id').notNull(),
    pinnedAt: ts('pinned_at').notNull().defaultNow(),
  },
  (t) => [index('content_pins_sha256_idx').on(t.sha256), index('content_pins_replica_idx').on(t.replicaId)],
);

// ── reservations (docs/reservations.md) ─────────────────────────────────────────────

/**
 * Leases on boards: a request waits (`waiting`) in a first-come-first-served queue until its
 * board (named, or any idle board its selector matches) is free, then holds it (`active`)
 * until `ends_at`, a release, or an admin breaking it (`ended`). A lease past `ends_at` never
 * holds a board, whether or not a sweep has marked it ended yet (every check reads `ends_at`).
 */
export const reservations = pgTable(
  'reservations',
  {
    id: serial('id').primaryKey(),
    /** The named board, or the board a selector request was given (null while it waits). */
    boardId: uuid('board_id').references(() => boards.id, { onDelete: 'cascade' }),
    /** A request for "any idle board matching": these label pairs (null when a board was named). */
    boardSelector: jsonb('board_selector').$type<Record<string, string>>(),
    /** Who holds it: the user's id (null for MM_API_TOKEN or with auth off) and name, as operations' `created_by`. */
    userId: uuid('user_id'),
    username: text('username'),
    note: text('note').notNull().default(''),
    durationS: integer('duration_s').notNull(),
    /** waiting | active | ended */
    status: text('status').$type<'waiting' | 'active' | 'ended'>().notNull().default('waiting'),
    requestedAt: ts('requested_at').notNull(),
    /** A waiting request given no board by then ends (`wait_timeout`). */
    waitUntil: ts('wait_until').notNull(),
    startsAt: ts('starts_at'),
    endsAt: ts('ends_at'),
    endedAt: ts('ended_at'),
    /** released | expired | broken | cancelled | wait_timeout */
    endReason: text('end_reason'),
    endedBy: text('ended_by'),
  },
  (t) => [
    // One lease per board at a time (the grant ends expired ones first, in the same transaction).
    uniqueIndex('reservations_active_board_idx')
      .on(t.boardId)
      .where(sql`${t.status} = 'active'`),
    index('reservations_status_idx').on(t.status, t.id),
    index('reservations_board_idx').on(t.boardId, t.id),
  ],
);

/**
 * Terminal sessions on boards (docs/terminal.md): who opened one on which board, when it
 * started and ended and how, and its recording (asciicast v2, at most
 * MM_TERMINAL_RECORDING_MAX_KB; written when the session ends). Removed after
 * MM_RETENTION_DAYS like finished operations. No foreign keys: the record outlives the
 * board and the user, as the audit log does.
 */
export const terminalSessions = pgTable(
  'terminal_sessions',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    boardId: uuid('board_id').notNull(),
    boardName: text('board_name').notNull(),
    userId: uuid('user_id'),
    username: text('username'),
    startedAt: ts('started_at').notNull().defaultNow(),
    endedAt: ts('ended_at'),
    /** The shell's exit status, when it exited. */
    exitCode: integer('exit_code'),
    /** How it ended: `exited`, `client_left`, `idle_timeout`, `board_rebooting`, `link_lost`, `server_stopping`, … */
    endReason: text('end_reason'),
    cols: integer('cols').notNull(),
    rows: integer('rows').notNull(),
    /** The replica that relayed it. */
    replicaId: text('replica_id').notNull(),
    recording: bytea('recording'),
    recordingBytes: integer('recording_bytes').notNull().default(0),
    /** The recording stopped at its cap (the session went on). */
    recordingTruncated: boolean('recording_truncated').notNull().default(false),
  },
  (t) => [index('terminal_sessions_started_idx').on(t.startedAt), index('terminal_sessions_board_idx').on(t.boardId, t.startedAt)],
);
