import os from 'node:os';
import path from 'node:path';
import { linkCompressionOf, type CompressPolicy } from '@mm/protocol';
import { z } from 'zod';

const GiB = 1024 ** 3;

/** Empty strings in the environment mean "unset", as a shell `FOO=` line suggests. */
const optionalString = z.preprocess((v) => (v === '' ? undefined : v), z.string().optional());

const int = (min: number, max: number) =>
  z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().int(`must be a whole number`).min(min, `must be at least ${min}`).max(max, `must be at most ${max}`),
  );

const seconds = z.preprocess(
  (v) => (v === '' ? undefined : v),
  z.coerce.number().finite('must be a number of seconds').min(0, 'must not be negative'),
);

export const configSchema = z.object({
  HOST: optionalString.default('127.0.0.1'),
  PORT: int(0, 65535).default(8000),
  DATABASE_URL: optionalString.refine(
    (v) => v === undefined || /^postgres(ql)?:\/\//.test(v),
    'must be a postgres:// or postgresql:// URL',
  ),
  MM_DATA_DIR: optionalString.default('./data'),
  MM_RESULTS_DIR: optionalString,
  MM_API_TOKEN: optionalString,
  MM_MAX_UPLOAD_BYTES: int(1, Number.MAX_SAFE_INTEGER).default(8 * GiB),
  MM_SYNC_WAIT_S: seconds.default(600),
  MM_REBOOT_TIMEOUT_S: seconds.default(600),
  /** Device-script relay: how long the board may take to answer a proxied request. */
  MM_RELAY_TIMEOUT_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0'),
  ).default(30),
  /** Camera relay: how long a board's camera upstream stays open after its last viewer left. */
  MM_CAMERA_LINGER_MS: int(0, 600_000).default(3000),
  MM_WEBCAM_PROGRAM: optionalString,
  /**
   * A request whose body stops moving for this long is closed (uploads, PAC archives and
   * proxied bodies have no total time limit; a stalled socket still goes).
   */
  MM_HTTP_IDLE_TIMEOUT_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0'),
  ).default(120),
  /**
   * A request's headers must all have arrived this long after its first byte (Node's
   * headersTimeout, which `requestTimeout: 0` would otherwise turn off): a client that
   * trickles header lines is cut with 408.
   */
  MM_HTTP_HEADERS_TIMEOUT_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0'),
  ).default(60),
  /** Agent link heartbeats (docs/agent-link.md): ping this often, drop a link silent for the timeout. */
  MM_HEARTBEAT_INTERVAL_MS: int(10, 3_600_000).default(15_000),
  MM_HEARTBEAT_TIMEOUT_MS: int(20, 3_600_000).default(45_000),
  MM_AGENT_HANDSHAKES_MAX: int(1, 100_000).default(64),
  /**
   * How far the receive windows of all boards' streams may grow past their starting 4 MiB
   * together, in MiB (streams.ts, WindowBudget): boards sending at once hold at most this
   * plus 4 MiB per stream in the server's memory.
   */
  MM_RECEIVE_WINDOWS_MB: int(8, 1_048_576).default(64),
  /**
   * Compression of file streams on agent links (docs/compression.md): `1` names the
   * `stream.compress` feature in welcome (used only with agents that name it too) and
   * compresses a file sent to a board when that is faster; `always` also compresses whenever
   * the file shrinks (metered links); `0` never.
   */
  MM_LINK_COMPRESSION: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['0', '1', 'always'])).default('1'),
  /** Resumable uploads untouched for this long are removed with their bytes. */
  MM_UPLOAD_EXPIRY_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0'),
  ).default(24 * 3600),
  /** Webhooks (docs/webhooks.md): private receivers, the time one attempt may take, retries, the offline grace, the secrets' key. */
  MM_WEBHOOK_ALLOW_PRIVATE: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['0', '1'])).default('0'),
  MM_WEBHOOK_TIMEOUT_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0').max(300, 'must be at most 300'),
  ).default(10),
  MM_WEBHOOK_RETRY_FOR_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0').max(30 * 86_400, 'must be at most 30 days'),
  ).default(86_400),
  MM_WEBHOOK_RETRY_BASE_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0'),
  ).default(30),
  MM_WEBHOOK_RETRY_MAX_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0'),
  ).default(7200),
  MM_WEBHOOK_OFFLINE_GRACE_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').min(0, 'must not be negative'),
  ).default(120),
  MM_WEBHOOK_SECRET_KEY: optionalString.refine((v) => v === undefined || v.length >= 32, 'must be at least 32 characters (e.g. openssl rand -base64 32)'),
  /** People and access (auth/): the public origin, more allowed Host names, proxy trust, sessions. */
  MM_PUBLIC_URL: optionalString.refine((v) => v === undefined || /^https?:\/\/[^/?#]+\/?$/.test(v), 'must be an origin such as https://mm.example.org'),
  MM_ALLOWED_HOSTS: optionalString,
  MM_ALLOW_NO_AUTH: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['0', '1']).optional()),
  MM_TRUST_PROXY: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['0', '1']).optional()),
  MM_SESSION_IDLE_S: int(60, 365 * 86_400).default(12 * 3600),
  MM_SESSION_MAX_S: int(60, 365 * 86_400).default(7 * 86_400),
  MM_REPLICA_ID: optionalString,
  /** A running operation asked to stop is marked cancelled after this long if its board does not confirm. */
  MM_CANCEL_GRACE_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0'),
  ).default(30),
  /** Power and hang recovery (docs/power.md): a board unheard of this long (its link lost, not closed by its agent) is `unresponsive`. */
  MM_HANG_DETECT_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0'),
  ).default(120),
  /** A run still going this long after it started is past its bound: cancelled, and a board that does not confirm is `unresponsive`. */
  MM_RUN_BOUND_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0'),
  ).default(4 * 3600),
  /** Power-cycle unresponsive boards that have power configured (1, the default) or only mark them (0). */
  MM_AUTO_RECOVER: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['0', '1'])).default('1'),
  /** At most this many automatic power cycles of one board in MM_RECOVER_WINDOW_S; then it is `bad`. */
  MM_RECOVER_MAX: int(1, 100).default(3),
  MM_RECOVER_WINDOW_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0'),
  ).default(3600),
  /** How long a power cycle keeps the board off (pdudaemon's reboot `delay`). */
  MM_POWER_CYCLE_OFF_S: int(0, 3600).default(5),
  /** Log bytes kept per operation: past this, its head and tail are kept and a line says what was cut. */
  MM_LOG_MAX_BYTES: int(1024, Number.MAX_SAFE_INTEGER).default(16 * 1024 * 1024),
  /** Pulling an output video from the board: fail it after this long in all, or this long without a byte. */
  MM_OUTPUT_PULL_TIMEOUT_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0'),
  ).default(3600),
  MM_OUTPUT_PULL_IDLE_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0'),
  ).default(60),
  /**
   * Behind nginx: file downloads answer with `X-Accel-Redirect: <prefix>content/…` or
   * `<prefix>results/…` and nginx sends the file from an internal location (sendfile).
   */
  MM_ACCEL_REDIRECT: optionalString.refine(
    (v) => v === undefined || /^\/[A-Za-z0-9._~\/-]*\/$/.test(v),
    'must be a path that starts and ends with / (the internal nginx location), e.g. /_protected/',
  ),
  /** Agent packages, install-agent.sh and the `mm` bundle served by `GET /api/downloads/` (docs/packages.md). */
  MM_PACKAGES_DIR: optionalString.default('./dist/packages'),
  /** An agent update must reconnect with the new version within this, or the board rolls back. */
  MM_AGENT_UPDATE_TIMEOUT_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0'),
  ).default(300),
  /** A deployed or started device script must answer on its port within this, or its previous version comes back (docs/device-scripts.md). */
  MM_SCRIPT_HEALTH_TIMEOUT_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0'),
  ).default(20),
  /**
   * A deployed or started device script must then stay up this long (no exit, no restart) or the
   * deploy fails `script_unstable` and its previous version comes back (docs/device-scripts.md); 0: not watched.
   */
  MM_SCRIPT_STABLE_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').min(0, 'must be 0 or more').max(600, 'must be at most 600'),
  ).default(5),
  /** Fleet scheduling (docs/fleet.md): an execute still waiting for a board after this long fails `queue_timeout`. */
  MM_QUEUE_TIMEOUT_S: int(1, 365 * 86_400).default(86_400),
  /** Reservations (docs/reservations.md): the longest lease, and renewal, one may ask for. */
  MM_RESERVATION_MAX_S: int(60, 365 * 86_400).default(8 * 3600),
  /** A running operation whose board stays offline this long fails `board_lost` (operations/board-lost.ts). */
  MM_BOARD_LOST_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0').max(30 * 86_400, 'must be at most 30 days'),
  ).default(300),
  /** How often each replica's scheduler sweeps: queue timeouts, due health checks, work stranded on boards gone. */
  MM_SCHEDULER_SWEEP_S: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of seconds').positive('must be more than 0').max(3600, 'must be at most 3600'),
  ).default(5),
  LOG_LEVEL: z
    .preprocess((v) => (v === '' ? undefined : v), z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']))
    .default('info'),
  /** `auto`: readable lines on a terminal, JSON (one object per line) otherwise. */
  MM_LOG_FORMAT: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['auto', 'json', 'pretty'])).default('auto'),
  /** Where file content lives (storage/create-blob-store.ts): the data folder (`fs`) or an S3-compatible store. */
  MM_BLOB_STORE: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['fs', 's3'])).default('fs'),
  MM_S3_ENDPOINT: optionalString.refine((v) => v === undefined || /^https?:\/\/[^/]+/.test(v), 'must be an http:// or https:// URL'),
  MM_S3_BUCKET: optionalString,
  MM_S3_REGION: optionalString.default('us-east-1'),
  MM_S3_ACCESS_KEY_ID: optionalString,
  MM_S3_SECRET_ACCESS_KEY: optionalString,
  MM_S3_FORCE_PATH_STYLE: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['0', '1', 'false', 'true'])).default('0'),
  /** Downloads of stored files answer 302 to a presigned URL on the store (clients must reach it). */
  MM_S3_REDIRECT_DOWNLOADS: z.preprocess((v) => (v === '' ? undefined : v), z.enum(['0', '1', 'false', 'true'])).default('0'),
  /** Finished operations (with their events and logs) older than this many days are pruned; 0 keeps them forever. */
  MM_RETENTION_DAYS: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.coerce.number().finite('must be a number of days').min(0, 'must not be negative'),
  ).default(90),
  /** Camera relay (docs/webcam.md): viewers one camera may have at once on this replica. */
  MM_CAMERA_MAX_VIEWERS: int(1, 10_000).default(50),
  /** Viewers one user (with auth off: one client address) may have at once on this replica, all cameras together. */
  MM_CAMERA_MAX_VIEWERS_PER_USER: int(1, 10_000).default(8),
  /**
   * Bytes of frames the camera relay keeps for viewers whose sockets have not taken them yet,
   * beyond each camera's newest frame; past it the viewers furthest behind are cut. At least
   * two of the largest frames (8 MiB each).
   */
  /** The most of one terminal session's recording kept (asciicast v2, KiB); 0 records nothing. */
  MM_TERMINAL_RECORDING_MAX_KB: int(0, 1024 * 1024).default(2048),
  MM_CAMERA_MAX_PENDING_BYTES: int(16 * 1024 * 1024, 64 * 1024 * 1024 * 1024).default(64 * 1024 * 1024),
}).superRefine((e, ctx) => {
  if (e.MM_BLOB_STORE === 's3' && !e.MM_S3_BUCKET) {
    ctx.addIssue({ code: 'custom', path: ['MM_S3_BUCKET'], message: 'must be set when MM_BLOB_STORE=s3' });
  }
  if ((e.MM_S3_ACCESS_KEY_ID === undefined) !== (e.MM_S3_SECRET_ACCESS_KEY === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['MM_S3_SECRET_ACCESS_KEY'], message: 'MM_S3_ACCESS_KEY_ID and MM_S3_SECRET_ACCESS_KEY go together' });
  }
});

/** The S3-compatible store's settings (`MM_S3_*`), when `MM_BLOB_STORE=s3`. */
export interface S3Settings {
  endpoint: string | undefined;
  bucket: string;
  region: string;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  forcePathStyle: boolean;
  /** `MM_S3_REDIRECT_DOWNLOADS`: file and video downloads redirect to a presigned URL on the store. */
  redirectDownloads: boolean;
}

export interface Config {
  host: string;
  port: number;
  databaseUrl: string | undefined;
  dataDir: string;
  resultsDir: string;
  apiToken: string | undefined;
  maxUploadBytes: number;
  syncWaitMs: number;
  rebootTimeoutMs: number;
  relayTimeoutMs: number;
  /** How long a camera upstream outlives its last viewer (MM_CAMERA_LINGER_MS). */
  cameraLingerMs: number;
  /** A file given to the seeded webcam entry as its program when it has none (MM_WEBCAM_PROGRAM; `pnpm start` sets it). */
  webcamProgram: string | undefined;
  /** How long a request body may stall before its socket is closed (MM_HTTP_IDLE_TIMEOUT_S). */
  httpIdleTimeoutMs: number;
  /** How long a request's headers may take to arrive in all (MM_HTTP_HEADERS_TIMEOUT_S). */
  httpHeadersTimeoutMs: number;
  heartbeatIntervalMs: number;
  /** Agent handshakes (token lookup to settled hello) in progress at once; more get 503 at once. */
  agentHandshakesMax: number;
  /** MM_RECEIVE_WINDOWS_MB in bytes: the cap on the growth of all boards' receive windows together. */
  receiveWindowsCapBytes: number;
  /**
   * MM_LINK_COMPRESSION: `off` offers no compressed file streams; otherwise agents that take
   * them get files compressed when that is faster (`auto`) or whenever they shrink (`always`).
   */
  linkCompression: 'off' | CompressPolicy;
  heartbeatTimeoutMs: number;
  uploadExpiryMs: number;
  /** This replica's name (`MM_REPLICA_ID`): the `replica` label of every metric when set. */
  replicaId: string | undefined;
  /** This replica's name in the board sessions table and on the bus: MM_REPLICA_ID, else host name and pid. */
  replicaName: string;
  logMaxBytes: number;
  cancelGraceMs: number;
  /** Power control and hang recovery (docs/power.md). */
  power: {
    hangDetectMs: number;
    runBoundMs: number;
    autoRecover: boolean;
    recoverMax: number;
    recoverWindowMs: number;
    cycleOffS: number;
  };
  outputPullTimeoutMs: number;
  outputPullIdleMs: number;
  logLevel: string;
  logFormat: 'auto' | 'json' | 'pretty';
  /** The internal nginx location prefix of X-Accel-Redirect downloads (`MM_ACCEL_REDIRECT`), if set. */
  accelRedirect: string | undefined;
  /** The dashboard's public origin (`MM_PUBLIC_URL`, e.g. `https://mm.example.org`), if set. */
  publicUrl: string | undefined;
  /** Extra Host names accepted besides loopback names, HOST and MM_PUBLIC_URL's host. */
  allowedHosts: string[];
  allowNoAuth: boolean;
  /** Honour X-Forwarded-Proto / X-Forwarded-For from a reverse proxy in front. */
  trustProxy: boolean;
  sessionIdleMs: number;
  sessionMaxMs: number;
  /** `MM_BLOB_STORE`: `fs` (`$MM_DATA_DIR/content`) or `s3` (then `s3` is set). */
  blobStore: 'fs' | 's3';
  s3: S3Settings | undefined;
  /** `MM_RETENTION_DAYS` in ms; 0 keeps everything forever. */
  retentionMs: number;
  /** `MM_PACKAGES_DIR`, absolute: what `GET /api/downloads/` serves. */
  packagesDir: string;
  /** `MM_AGENT_UPDATE_TIMEOUT_S` in ms. */
  agentUpdateTimeoutMs: number;
  /** `MM_SCRIPT_HEALTH_TIMEOUT_S` in seconds. */
  scriptHealthTimeoutS: number;
  /** `MM_SCRIPT_STABLE_S` in seconds. */
  scriptStableS: number;
  /** `MM_QUEUE_TIMEOUT_S` in ms: the default `queue_timeout_s` of an execute. */
  queueTimeoutMs: number;
  /** `MM_SCHEDULER_SWEEP_S` in ms. */
  schedulerSweepMs: number;
  /** `MM_RESERVATION_MAX_S`: the longest lease one may ask for, in seconds. */
  reservationMaxS: number;
  /** `MM_BOARD_LOST_S` in ms. */
  boardLostMs: number;
  /** MM_CAMERA_MAX_VIEWERS: viewers per camera on this replica. */
  cameraMaxViewers: number;
  /** MM_CAMERA_MAX_VIEWERS_PER_USER: viewers per user (or client address) on this replica. */
  cameraMaxViewersPerUser: number;
  /** MM_TERMINAL_RECORDING_MAX_KB in bytes: the cap of one terminal session's recording. */
  terminalRecordingMaxBytes: number;
  /** MM_CAMERA_MAX_PENDING_BYTES: frame bytes held for viewers' unsent writes, beyond the newest frames. */
  cameraMaxPendingBytes: number;
  /** Webhooks (docs/webhooks.md). */
  webhooks: WebhookSettings;
}

/** The webhook settings (`MM_WEBHOOK_*`), in ms where they are times. */
export interface WebhookSettings {
  /** `MM_WEBHOOK_ALLOW_PRIVATE=1`: receivers on loopback, private and link-local addresses are allowed (an on-premises server). */
  allowPrivate: boolean;
  /** One attempt in all: resolving, connecting, sending and reading the answer. */
  timeoutMs: number;
  /** Retries stop this long after the event (or a redelivery); the delivery is then `failed`. */
  retryForMs: number;
  /** The first retry waits up to this; each one doubles it (full jitter)… */
  retryBaseMs: number;
  /** …up to this. */
  retryMaxMs: number;
  /** A board offline this long is a `board.offline` event. */
  offlineGraceMs: number;
  /** `MM_WEBHOOK_SECRET_KEY`, if set: seals the subscriptions' secrets (else a key file in MM_DATA_DIR). */
  secretKey: string | undefined;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment once; throws a ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message} (got ${JSON.stringify(env[String(i.path[0])])})`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.MM_DATA_DIR);
  return {
    host: e.HOST,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    dataDir,
    resultsDir: path.resolve(e.MM_RESULTS_DIR ?? path.join(dataDir, 'results')),
    apiToken: e.MM_API_TOKEN,
    maxUploadBytes: e.MM_MAX_UPLOAD_BYTES,
    syncWaitMs: Math.round(e.MM_SYNC_WAIT_S * 1000),
    rebootTimeoutMs: Math.round(e.MM_REBOOT_TIMEOUT_S * 1000),
    relayTimeoutMs: Math.max(1, Math.round(e.MM_RELAY_TIMEOUT_S * 1000)),
    cameraLingerMs: e.MM_CAMERA_LINGER_MS,
    webcamProgram: e.MM_WEBCAM_PROGRAM,
    httpIdleTimeoutMs: Math.max(1, Math.round(e.MM_HTTP_IDLE_TIMEOUT_S * 1000)),
    httpHeadersTimeoutMs: Math.max(1, Math.round(e.MM_HTTP_HEADERS_TIMEOUT_S * 1000)),
    heartbeatIntervalMs: e.MM_HEARTBEAT_INTERVAL_MS,
    agentHandshakesMax: e.MM_AGENT_HANDSHAKES_MAX,
    receiveWindowsCapBytes: e.MM_RECEIVE_WINDOWS_MB * 1024 * 1024,
    linkCompression: linkCompressionOf(e.MM_LINK_COMPRESSION),
    heartbeatTimeoutMs: e.MM_HEARTBEAT_TIMEOUT_MS,
    uploadExpiryMs: Math.max(1, Math.round(e.MM_UPLOAD_EXPIRY_S * 1000)),
    replicaId: e.MM_REPLICA_ID,
    replicaName: e.MM_REPLICA_ID ?? `${os.hostname()}-${process.pid}`,
    logMaxBytes: e.MM_LOG_MAX_BYTES,
    cancelGraceMs: Math.max(1, Math.round(e.MM_CANCEL_GRACE_S * 1000)),
    power: {
      hangDetectMs: Math.max(1, Math.round(e.MM_HANG_DETECT_S * 1000)),
      runBoundMs: Math.max(1, Math.round(e.MM_RUN_BOUND_S * 1000)),
      autoRecover: e.MM_AUTO_RECOVER === '1',
      recoverMax: e.MM_RECOVER_MAX,
      recoverWindowMs: Math.max(1, Math.round(e.MM_RECOVER_WINDOW_S * 1000)),
      cycleOffS: e.MM_POWER_CYCLE_OFF_S,
    },
    outputPullTimeoutMs: Math.max(1, Math.round(e.MM_OUTPUT_PULL_TIMEOUT_S * 1000)),
    outputPullIdleMs: Math.max(1, Math.round(e.MM_OUTPUT_PULL_IDLE_S * 1000)),
    logLevel: e.LOG_LEVEL,
    logFormat: e.MM_LOG_FORMAT,
    accelRedirect: e.MM_ACCEL_REDIRECT,
    publicUrl: e.MM_PUBLIC_URL?.replace(/\/$/, ''),
    allowedHosts: (e.MM_ALLOWED_HOSTS ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    allowNoAuth: e.MM_ALLOW_NO_AUTH === '1',
    trustProxy: e.MM_TRUST_PROXY === '1',
    sessionIdleMs: e.MM_SESSION_IDLE_S * 1000,
    sessionMaxMs: e.MM_SESSION_MAX_S * 1000,
    blobStore: e.MM_BLOB_STORE,
    s3:
      e.MM_BLOB_STORE === 's3'
        ? {
            endpoint: e.MM_S3_ENDPOINT,
            bucket: e.MM_S3_BUCKET!,
            region: e.MM_S3_REGION,
            accessKeyId: e.MM_S3_ACCESS_KEY_ID,
            secretAccessKey: e.MM_S3_SECRET_ACCESS_KEY,
            forcePathStyle: e.MM_S3_FORCE_PATH_STYLE === '1' || e.MM_S3_FORCE_PATH_STYLE === 'true',
            redirectDownloads: e.MM_S3_REDIRECT_DOWNLOADS === '1' || e.MM_S3_REDIRECT_DOWNLOADS === 'true',
          }
        : undefined,
    retentionMs: Math.round(e.MM_RETENTION_DAYS * 86_400_000),
    packagesDir: path.resolve(e.MM_PACKAGES_DIR),
    agentUpdateTimeoutMs: Math.max(1000, Math.round(e.MM_AGENT_UPDATE_TIMEOUT_S * 1000)),
    scriptHealthTimeoutS: e.MM_SCRIPT_HEALTH_TIMEOUT_S,
    scriptStableS: e.MM_SCRIPT_STABLE_S,
    queueTimeoutMs: e.MM_QUEUE_TIMEOUT_S * 1000,
    schedulerSweepMs: Math.max(50, Math.round(e.MM_SCHEDULER_SWEEP_S * 1000)),
    reservationMaxS: e.MM_RESERVATION_MAX_S,
    boardLostMs: Math.max(1000, Math.round(e.MM_BOARD_LOST_S * 1000)),
    webhooks: {
      allowPrivate: e.MM_WEBHOOK_ALLOW_PRIVATE === '1',
      timeoutMs: Math.max(1, Math.round(e.MM_WEBHOOK_TIMEOUT_S * 1000)),
      retryForMs: Math.max(1, Math.round(e.MM_WEBHOOK_RETRY_FOR_S * 1000)),
      retryBaseMs: Math.max(1, Math.round(e.MM_WEBHOOK_RETRY_BASE_S * 1000)),
      retryMaxMs: Math.max(1, Math.round(Math.max(e.MM_WEBHOOK_RETRY_MAX_S, e.MM_WEBHOOK_RETRY_BASE_S) * 1000)),
      offlineGraceMs: Math.round(e.MM_WEBHOOK_OFFLINE_GRACE_S * 1000),
      secretKey: e.MM_WEBHOOK_SECRET_KEY,
    },
    cameraMaxViewers: e.MM_CAMERA_MAX_VIEWERS,
    cameraMaxViewersPerUser: e.MM_CAMERA_MAX_VIEWERS_PER_USER,
    cameraMaxPendingBytes: e.MM_CAMERA_MAX_PENDING_BYTES,
    terminalRecordingMaxBytes: e.MM_TERMINAL_RECORDING_MAX_KB * 1024,
  };
}
