import path from 'node:path';
import { z } from 'zod';
import { AGENT_CONNECT_PATH, HEARTBEAT_INTERVAL_MS, HEARTBEAT_TIMEOUT_MS } from '@mm/protocol';
import { splitCommandLine } from './command-line.ts';
import { LOG_LEVELS, type LogLevel } from './logger.ts';

const GiB = 1024 ** 3;

/** Empty strings in the environment mean "unset", as a shell `FOO=` line suggests. */
const unsetIfEmpty = (v: unknown) => (v === '' ? undefined : v);
const optionalString = z.preprocess(unsetIfEmpty, z.string().optional());

const int = (min: number, max: number) =>
  z.preprocess(
    unsetIfEmpty,
    z.coerce.number().int('must be a whole number').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`),
  );

/** An on/off setting: 1/true/yes/on or 0/false/no/off (any case); unset is off. */
const flag = z.preprocess(
  unsetIfEmpty,
  z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(['1', 'true', 'yes', 'on', '0', 'false', 'no', 'off'], { error: 'must be 1 or 0 (true/false, yes/no, on/off)' }))
    .transform((v) => ['1', 'true', 'yes', 'on'].includes(v))
    .default(false),
);

const positiveSeconds = z.preprocess(unsetIfEmpty, z.coerce.number().finite('must be a number of seconds').positive('must be more than 0'));

/** A command line, split into argv without a shell. */
const commandLine = z.preprocess(
  unsetIfEmpty,
  z
    .string()
    .transform((line, ctx) => {
      try {
        const argv = splitCommandLine(line);
        if (argv.length === 0) ctx.addIssue({ code: 'custom', message: 'must name a command' });
        return argv;
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: `is not a valid command line: ${(err as Error).message}` });
        return z.NEVER;
      }
    })
    .optional(),
);

const serverUrl = z.preprocess(
  unsetIfEmpty,
  z
    .string()
    .default('http://127.0.0.1:8000')
    .refine((v) => {
      try {
        return ['http:', 'https:', 'ws:', 'wss:'].includes(new URL(v).protocol);
      } catch {
        return false;
      }
    }, 'must be an http://, https://, ws:// or wss:// URL'),
);

export const agentEnvSchema = z.object({
  MM_SERVER_URL: serverUrl,
  MM_BOARD_TOKEN: z.preprocess(unsetIfEmpty, z.string({ error: 'is required (the board token shown when the board was registered)' })),
  MM_AGENT_DIR: optionalString,
  MM_RUNNER: commandLine,
  MM_RUN_TIMEOUT_S: positiveSeconds.default(3600),
  MM_CACHE_MAX_BYTES: int(1, Number.MAX_SAFE_INTEGER).default(20 * GiB),
  MM_XLNX_CONFIG: optionalString,
  MM_REBOOT: optionalString,
  MM_PAC_DIR: optionalString,
  MM_HEARTBEAT_INTERVAL_MS: int(10, 3_600_000).default(HEARTBEAT_INTERVAL_MS),
  MM_HEARTBEAT_TIMEOUT_MS: int(10, 3_600_000).default(HEARTBEAT_TIMEOUT_MS),
  MM_RECONNECT_MAX_DELAY_MS: int(10, 3_600_000).default(30_000),
  MM_BOOT_ID_FILE: optionalString,
  /** --simulate: the GPIO motor script's port (default its catalogue entry's; 0 picks a free one). */
  MM_SIM_GPIO_PORT: int(0, 65535).optional(),
  /** --simulate: how a simulated reboot goes (see SimulatedRebootOptions). */
  MM_SIM_REBOOT_DELAY_MS: int(0, 3_600_000).default(3000),
  MM_SIM_REBOOT_NEVER_RETURN: flag,
  MM_SIM_REBOOT_SAME_BOOT_ID: flag,
  MM_SIM_REBOOT_FALLBACK: flag,
  LOG_LEVEL: z.preprocess(unsetIfEmpty, z.enum(LOG_LEVELS)).default('info'),
});

export interface AgentConfig {
  /** The control plane's base URL as given. */
  serverUrl: string;
  /** Where the agent opens its WebSocket (ws:// or wss://, ending in /api/agent/connect/). */
  connectUrl: string;
  boardToken: string;
  /** Cache, work folders, journal, invocation folders. */
  agentDir: string;
  /** The runner's argv; undefined only with --simulate (the simulated board brings its own). */
  runner: string[] | undefined;
  runTimeoutMs: number;
  cacheMaxBytes: number;
  /** The xlnx-config executable (a path, or a name found in PATH). */
  xlnxConfig: string;
  /** The reboot command line. */
  reboot: string;
  /** Where PACs are installed. */
  pacDir: string;
  heartbeatIntervalMs: number;
  heartbeatTimeoutMs: number;
  /** Cap of the reconnect backoff (full jitter below it). */
  reconnectMaxDelayMs: number;
  bootIdFile: string;
  logLevel: LogLevel;
  simulate: boolean;
  /** --simulate: the GPIO motor script's port, if not its catalogue entry's. */
  simulatedGpioPort: number | undefined;
  /** --simulate: how a simulated reboot goes (MM_SIM_REBOOT_*). */
  simulatedReboot?: { downMs: number; neverReturn: boolean; sameBootId: boolean; fallback: boolean };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** `http://host:8000/base` → `ws://host:8000/base/api/agent/connect/`. */
export function connectUrlFor(serverUrl: string): string {
  const url = new URL(serverUrl);
  url.protocol = url.protocol === 'https:' || url.protocol === 'wss:' ? 'wss:' : 'ws:';
  url.pathname = url.pathname.replace(/\/+$/, '') + AGENT_CONNECT_PATH;
  url.search = '';
  url.hash = '';
  return url.toString();
}

export interface ConfigOptions {
  simulate: boolean;
  /** With --simulate: the simulated board's runner, xlnx-config, PAC folder and boot id, used where the env sets none. */
  simulatedDefaults?: (agentDir: string) => { runner: string[]; xlnxConfig: string; pacDir: string; bootIdFile: string };
}

/** Parses the environment once; throws a ConfigError naming every bad variable. */
export function loadAgentConfig(env: Record<string, string | undefined>, opts: ConfigOptions): AgentConfig {
  const parsed = agentEnvSchema.safeParse(env);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((i) => {
        const name = String(i.path[0]);
        const got = name === 'MM_BOARD_TOKEN' || env[name] === undefined ? '' : ` (got ${JSON.stringify(env[name])})`;
        return `  ${name}: ${i.message}${got}`;
      });
  if (parsed.success && parsed.data.MM_HEARTBEAT_TIMEOUT_MS <= parsed.data.MM_HEARTBEAT_INTERVAL_MS) {
    problems.push(`  MM_HEARTBEAT_TIMEOUT_MS: must be longer than MM_HEARTBEAT_INTERVAL_MS (${parsed.data.MM_HEARTBEAT_INTERVAL_MS})`);
  }
  if (!opts.simulate && (env.MM_RUNNER ?? '').trim() === '') {
    problems.push('  MM_RUNNER: is required (the command that runs an invocation), unless --simulate');
  }
  if (!parsed.success || problems.length > 0) throw new ConfigError(`Invalid configuration:\n${problems.join('\n')}`);
  const e = parsed.data;
  const agentDir = path.resolve(e.MM_AGENT_DIR ?? (opts.simulate ? './data/agent' : '/var/lib/mm-agent'));
  const simulated = opts.simulatedDefaults?.(agentDir);
  return {
    serverUrl: e.MM_SERVER_URL,
    connectUrl: connectUrlFor(e.MM_SERVER_URL),
    boardToken: e.MM_BOARD_TOKEN,
    agentDir,
    runner: e.MM_RUNNER ?? simulated?.runner,
    runTimeoutMs: Math.round(e.MM_RUN_TIMEOUT_S * 1000),
    cacheMaxBytes: e.MM_CACHE_MAX_BYTES,
    xlnxConfig: e.MM_XLNX_CONFIG ?? simulated?.xlnxConfig ?? 'xlnx-config',
    reboot: e.MM_REBOOT ?? 'systemctl reboot',
    pacDir: path.resolve(e.MM_PAC_DIR ?? simulated?.pacDir ?? '/boot/firmware/xlnx-config'),
    heartbeatIntervalMs: e.MM_HEARTBEAT_INTERVAL_MS,
    heartbeatTimeoutMs: e.MM_HEARTBEAT_TIMEOUT_MS,
    reconnectMaxDelayMs: e.MM_RECONNECT_MAX_DELAY_MS,
    bootIdFile: e.MM_BOOT_ID_FILE ?? simulated?.bootIdFile ?? '/proc/sys/kernel/random/boot_id',
    logLevel: e.LOG_LEVEL,
    simulate: opts.simulate,
    simulatedGpioPort: e.MM_SIM_GPIO_PORT,
    simulatedReboot: {
      downMs: e.MM_SIM_REBOOT_DELAY_MS,
      neverReturn: e.MM_SIM_REBOOT_NEVER_RETURN,
      sameBootId: e.MM_SIM_REBOOT_SAME_BOOT_ID,
      fallback: e.MM_SIM_REBOOT_FALLBACK,
    },
  };
}
