import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { AGENT_CONNECT_PATH, HEARTBEAT_INTERVAL_MS, HEARTBEAT_TIMEOUT_MS, linkCompressionOf, type CompressPolicy } from '@mm/protocol';
import { splitCommandLine } from './command-line.ts';
import { LOG_LEVELS, type LogLevel } from './logger.ts';
import { runnerLauncher } from '@mm/runner/home';
import type { TerminalSettings } from './terminal/terminal-manager.ts';

const GiB = 1024 ** 3;

/** The GPIO motor script's port (its catalogue entry's): what the relay reaches by default. */
export const DEFAULT_SCRIPT_PORTS: readonly number[] = [8765];

/** MM_SCRIPTS_ROOT's default: the folder the agent package creates for device scripts. */
export const DEFAULT_SCRIPTS_ROOT = '/opt/model-manager/device-scripts';

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

/** A comma- or space-separated list of TCP ports (1–65535). */
const portList = z.preprocess(
  unsetIfEmpty,
  z
    .string()
    .transform((text, ctx) => {
      const ports = text.split(/[\s,]+/).filter(Boolean).map(Number);
      if (ports.length === 0 || ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) {
        ctx.addIssue({ code: 'custom', message: 'must be a comma-separated list of ports (1-65535)' });
        return z.NEVER;
      }
      return [...new Set(ports)];
    })
    .optional(),
);

export const agentEnvSchema = z.object({
  MM_SERVER_URL: serverUrl,
  MM_BOARD_TOKEN: optionalString,
  /** A file holding the token instead (keeps it out of the agent's environment altogether). */
  MM_BOARD_TOKEN_FILE: optionalString,
  /** With no token yet: enroll with this key and keep the token in MM_BOARD_TOKEN_FILE (docs/enrollment.md). */
  MM_PROVISIONING_KEY: optionalString,
  /** The board's stable id for enrollment (default /etc/machine-id; with --simulate, a file in MM_AGENT_DIR). */
  MM_MACHINE_ID_FILE: optionalString,
  /** Run the runner as this user (its own, not the agent's). */
  MM_RUNNER_USER: optionalString,
  /** The ports of the board's loopback the device-script relay may reach (the catalogue cannot widen this). */
  MM_SCRIPT_PORTS: portList,
  MM_AGENT_DIR: optionalString,
  /** Where device scripts may be written: a catalogue entry's remote_dir must lie inside it (docs/device-scripts.md). */
  MM_SCRIPTS_ROOT: optionalString,
  MM_RUNNER: commandLine,
  MM_RUN_TIMEOUT_S: positiveSeconds.default(3600),
  MM_CACHE_MAX_BYTES: int(1, Number.MAX_SAFE_INTEGER).default(20 * GiB),
  MM_XLNX_CONFIG: optionalString,
  MM_REBOOT: optionalString,
  MM_PAC_DIR: optionalString,
  /** A lab host (docs/power.md): the pdudaemon this agent relays power commands to, e.g. http://127.0.0.1:16421. */
  MM_PDUDAEMON_URL: z.preprocess(
    unsetIfEmpty,
    z
      .string()
      .refine((v) => {
        try {
          return ['http:', 'https:'].includes(new URL(v).protocol);
        } catch {
          return false;
        }
      }, 'must be an http:// or https:// URL')
      .optional(),
  ),
  MM_HEARTBEAT_INTERVAL_MS: int(10, 3_600_000).default(HEARTBEAT_INTERVAL_MS),
  MM_HEARTBEAT_TIMEOUT_MS: int(10, 3_600_000).default(HEARTBEAT_TIMEOUT_MS),
  MM_RECONNECT_MAX_DELAY_MS: int(10, 3_600_000).default(30_000),
  /**
   * Compressed file streams on the link (docs/compression.md): `1` names `stream.compress` in
   * hello and compresses what the agent sends when that is faster; `always` whenever it
   * shrinks (metered links); `0` never.
   */
  MM_LINK_COMPRESSION: z.preprocess(unsetIfEmpty, z.enum(['0', '1', 'always'])).default('1'),
  /** How often the agent sends the board's telemetry (temperatures, power, memory, load, free disk). */
  MM_TELEMETRY_INTERVAL_S: z.preprocess(unsetIfEmpty, z.coerce.number().finite('must be a number of seconds').min(0.1, 'must be at least 0.1').max(86_400, 'must be at most 86400')).default(30),
  MM_BOOT_ID_FILE: optionalString,
  /** Where /proc, /sys and /etc are read for the board's facts (tests point it at a fake tree). */
  MM_HOST_ROOT: optionalString,
  /** --simulate: which board the simulated one reports being (its device tree, FRU EEPROMs, os-release). */
  MM_SIM_BOARD_MODEL: z.preprocess(unsetIfEmpty, z.enum(['zcu104', 'kv260'])).default('zcu104'),
  /** --simulate: the GPIO motor script's port (default its catalogue entry's; 0 picks a free one). */
  MM_SIM_GPIO_PORT: int(0, 65535).optional(),
  /** --simulate: how a simulated reboot goes (see SimulatedRebootOptions). */
  MM_SIM_REBOOT_DELAY_MS: int(0, 3_600_000).default(3000),
  MM_SIM_REBOOT_NEVER_RETURN: flag,
  MM_SIM_REBOOT_SAME_BOOT_ID: flag,
  MM_SIM_REBOOT_FALLBACK: flag,
  LOG_LEVEL: z.preprocess(unsetIfEmpty, z.enum(LOG_LEVELS)).default('info'),
  /** Accelerator tools (docs/accelerators.md): command lines, e.g. `sudo -n /usr/bin/xmutil`. */
  MM_XMUTIL: commandLine,
  MM_DFX_MGR_CLIENT: commandLine,
  MM_XDPUTIL: commandLine,
  /** Where accelerated applications (app folders) live: dfx-mgrd's firmware folder. */
  MM_APPS_DIR: optionalString,
  /** A load or unload of an app still running after this long is killed (`app_load_timeout`). */
  MM_APP_LOAD_TIMEOUT_S: positiveSeconds.default(60),
  /** The Python 3 that runs mm-runner, the default runner (docs/runner.md): it needs numpy, OpenCV and the Vitis AI runtime's xir/vart. */
  MM_PYTHON: optionalString,
  /** fpgautil, which loads an invocation's raw bitstream before an mm-runner run (a command line, e.g. `sudo -n /usr/bin/fpgautil`). */
  MM_FPGAUTIL: commandLine,
  /** Terminals on the board (docs/terminal.md): `off` refuses every session. */
  MM_TERMINAL: z.preprocess(unsetIfEmpty, z.string().trim().toLowerCase().pipe(z.enum(['on', 'off', '1', '0', 'true', 'false', 'yes', 'no']))).default('on'),
  /** The user a terminal's login shell runs as (default the agent's own; root only when named here). */
  MM_TERMINAL_USER: optionalString,
  /** A terminal session with no bytes either way for this long ends. */
  MM_TERMINAL_IDLE_S: positiveSeconds.default(900),
  /** The shell a terminal runs (default the user's login shell). */
  MM_TERMINAL_SHELL: optionalString,
});

export interface AgentConfig {
  /** The control plane's base URL as given. */
  serverUrl: string;
  /** Where the agent opens its WebSocket (ws:// or wss://, ending in /api/agent/connect/). */
  connectUrl: string;
  /** The board token; empty until enrollment (below) has got one. */
  boardToken: string;
  /** No token yet and a provisioning key: enroll first (enroll/enroll.ts), then forget the key. */
  enrollment?: Enrollment | undefined;
  /**
   * The user the runner runs as (MM_RUNNER_USER), resolved at start. As root the agent
   * spawns the runner with that uid/gid; otherwise through `sudo -n -u <name> --`.
   */
  runnerUser: RunnerUser | undefined;
  /** The loopback ports the device-script relay may reach (MM_SCRIPT_PORTS; with --simulate, plus the simulated GPIO script's). */
  scriptPorts: number[];
  /** Cache, work folders, journal, invocation folders. */
  agentDir: string;
  /**
   * MM_SCRIPTS_ROOT: the folder device scripts' remote_dir must lie in (`root`), and where that
   * folder is on disk (`disk`: the same on a real board; with --simulate, `<agent dir>/device-scripts`).
   */
  scriptsRoot: { root: string; disk: string };
  /**
   * The runner's argv: MM_RUNNER; unset, mm-runner (the agent package's runner for Vitis AI,
   * docs/runner.md), or with --simulate the simulated board's runner.
   */
  runner: string[] | undefined;
  /** MM_RUNNER is unset: the runner is mm-runner (the simulated board's runs mm-runner for a mm-runner/1 parameter file). */
  runnerIsDefault?: boolean;
  /** MM_PYTHON: the interpreter mm-runner runs with (default `python3`). */
  python?: string;
  /** MM_FPGAUTIL, split into argv (default `fpgautil`): loads an mm-runner run's raw bitstream. */
  fpgautil?: string[];
  runTimeoutMs: number;
  cacheMaxBytes: number;
  /** The xlnx-config executable (a path, or a name found in PATH). */
  xlnxConfig: string;
  /** The reboot command line. */
  reboot: string;
  /** MM_PDUDAEMON_URL: set on a lab host, which relays power commands to this pdudaemon (docs/power.md). */
  pdudaemonUrl?: string | undefined;
  /** Where PACs are installed. */
  pacDir: string;
  heartbeatIntervalMs: number;
  heartbeatTimeoutMs: number;
  /** Cap of the reconnect backoff (full jitter below it). */
  reconnectMaxDelayMs: number;
  /**
   * MM_LINK_COMPRESSION: `off` takes and sends no compressed file streams; otherwise what the
   * agent sends goes compressed when that is faster (`auto`) or whenever it shrinks (`always`).
   */
  linkCompression: 'off' | CompressPolicy;
  /** MM_TELEMETRY_INTERVAL_S in ms. */
  telemetryIntervalMs: number;
  bootIdFile: string;
  /** MM_HOST_ROOT: the folder /proc, /sys and /etc are read under for the board's facts. */
  hostRoot: string;
  logLevel: LogLevel;
  simulate: boolean;
  /** --simulate: the GPIO motor script's port, if not its catalogue entry's. */
  simulatedGpioPort: number | undefined;
  /** --simulate: the board the simulated one reports being (MM_SIM_BOARD_MODEL). */
  simulatedBoardModel: 'zcu104' | 'kv260';
  /** --simulate: how a simulated reboot goes (MM_SIM_REBOOT_*). */
  simulatedReboot?: { downMs: number; neverReturn: boolean; sameBootId: boolean; fallback: boolean };
  /**
   * The accelerator tools and the apps folder (MM_XMUTIL, MM_DFX_MGR_CLIENT, MM_XDPUTIL,
   * MM_APPS_DIR, MM_APP_LOAD_TIMEOUT_S); always set by loadAgentConfig. Absent (agents built
   * by hand in tests): the agent reports no accelerator and has no app methods.
   */
  accelerator?: AcceleratorConfig;
  /** Terminals (MM_TERMINAL, MM_TERMINAL_USER, MM_TERMINAL_IDLE_S, MM_TERMINAL_SHELL); absent (agents built by hand in tests): off. */
  terminal?: TerminalSettings;
}

export interface AcceleratorConfig {
  xmutil: string[];
  dfxMgrClient: string[];
  xdputil: string[];
  appsDir: string;
  loadTimeoutMs: number;
}

export interface Enrollment {
  key: string;
  /** Where the token goes (MM_BOARD_TOKEN_FILE, mode 0600). */
  tokenFile: string;
  /** The machine id's file: read if it exists; the last one is created (random) when none does. */
  machineIdFiles: string[];
}

export interface RunnerUser {
  name: string;
  uid: number;
  gid: number;
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
  simulatedDefaults?: (agentDir: string) => {
    runner: string[];
    xlnxConfig: string;
    pacDir: string;
    bootIdFile: string;
    accelerator?: Omit<AcceleratorConfig, 'loadTimeoutMs'>;
    fpgautil?: string[];
  };
}

/** Parses the environment once; throws a ConfigError naming every bad variable. */
export function loadAgentConfig(env: Record<string, string | undefined>, opts: ConfigOptions): AgentConfig {
  const parsed = agentEnvSchema.safeParse(env);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((i) => {
        const name = String(i.path[0]);
        const got = name === 'MM_BOARD_TOKEN' || name === 'MM_PROVISIONING_KEY' || env[name] === undefined ? '' : ` (got ${JSON.stringify(env[name])})`;
        return `  ${name}: ${i.message}${got}`;
      });
  if (parsed.success && parsed.data.MM_HEARTBEAT_TIMEOUT_MS <= parsed.data.MM_HEARTBEAT_INTERVAL_MS) {
    problems.push(`  MM_HEARTBEAT_TIMEOUT_MS: must be longer than MM_HEARTBEAT_INTERVAL_MS (${parsed.data.MM_HEARTBEAT_INTERVAL_MS})`);
  }
  let boardToken = env.MM_BOARD_TOKEN || undefined;
  const tokenFile = env.MM_BOARD_TOKEN_FILE || undefined;
  const provisioningKey = env.MM_PROVISIONING_KEY || undefined;
  let enrollWith: string | undefined;
  if (tokenFile !== undefined) {
    if (boardToken !== undefined) problems.push('  MM_BOARD_TOKEN_FILE: set either MM_BOARD_TOKEN or MM_BOARD_TOKEN_FILE, not both');
    try {
      boardToken = fs.readFileSync(tokenFile, 'utf8').trim();
      if (boardToken === '' && provisioningKey !== undefined) enrollWith = provisioningKey;
      else if (boardToken === '') problems.push(`  MM_BOARD_TOKEN_FILE: ${tokenFile} is empty`);
    } catch (err) {
      // No token kept yet: a provisioning key gets one (and the key is never used again).
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && provisioningKey !== undefined) enrollWith = provisioningKey;
      else problems.push(`  MM_BOARD_TOKEN_FILE: cannot read ${tokenFile}: ${(err as Error).message}`);
    }
  } else if (provisioningKey !== undefined && boardToken === undefined) {
    problems.push('  MM_PROVISIONING_KEY: needs MM_BOARD_TOKEN_FILE (where the token it gets is kept)');
  } else if (boardToken === undefined) {
    problems.push('  MM_BOARD_TOKEN: is required (the board token shown when the board was registered), or MM_BOARD_TOKEN_FILE, or MM_PROVISIONING_KEY');
  }
  if (enrollWith !== undefined) boardToken = '';
  let runnerUser: RunnerUser | undefined;
  if (parsed.success && parsed.data.MM_RUNNER_USER !== undefined) {
    try {
      runnerUser = resolveUser(parsed.data.MM_RUNNER_USER);
    } catch (err) {
      problems.push(`  MM_RUNNER_USER: ${(err as Error).message}`);
    }
  }
  let terminal: TerminalSettings | undefined;
  if (parsed.success) {
    try {
      terminal = terminalSettings(parsed.data);
    } catch (err) {
      problems.push(`  MM_TERMINAL_USER: ${(err as Error).message}`);
    }
  }
  if (!parsed.success || problems.length > 0 || boardToken === undefined) throw new ConfigError(`Invalid configuration:\n${problems.join('\n')}`);
  const e = parsed.data;
  // Read once, held in the config only: children the agent starts (runner, PAC commands,
  // sudo) must not inherit it. (The kernel's copy in /proc/<pid>/environ stays as it was
  // at exec: MM_BOARD_TOKEN_FILE keeps the token out of it, MM_RUNNER_USER keeps the
  // runner from reading it.)
  delete env.MM_BOARD_TOKEN;
  delete env.MM_BOARD_TOKEN_FILE;
  delete env.MM_PROVISIONING_KEY;
  const agentDir = path.resolve(e.MM_AGENT_DIR ?? (opts.simulate ? './data/agent' : '/var/lib/mm-agent'));
  const ownMachineId = path.join(agentDir, 'machine-id');
  const machineIdFiles = e.MM_MACHINE_ID_FILE ? [e.MM_MACHINE_ID_FILE] : opts.simulate ? [ownMachineId] : ['/etc/machine-id', ownMachineId];
  const simulated = opts.simulatedDefaults?.(agentDir);
  return {
    serverUrl: e.MM_SERVER_URL,
    connectUrl: connectUrlFor(e.MM_SERVER_URL),
    boardToken,
    scriptsRoot: {
      root: path.resolve(e.MM_SCRIPTS_ROOT ?? DEFAULT_SCRIPTS_ROOT),
      disk: opts.simulate ? path.join(agentDir, 'device-scripts') : path.resolve(e.MM_SCRIPTS_ROOT ?? DEFAULT_SCRIPTS_ROOT),
    },
    enrollment: enrollWith !== undefined && tokenFile !== undefined ? { key: enrollWith, tokenFile: path.resolve(tokenFile), machineIdFiles } : undefined,
    runnerUser,
    scriptPorts: [...(e.MM_SCRIPT_PORTS ?? DEFAULT_SCRIPT_PORTS)],
    agentDir,
    runner: e.MM_RUNNER ?? simulated?.runner ?? [runnerLauncher()],
    runnerIsDefault: e.MM_RUNNER === undefined,
    python: e.MM_PYTHON ?? 'python3',
    fpgautil: e.MM_FPGAUTIL ?? simulated?.fpgautil ?? ['fpgautil'],
    runTimeoutMs: Math.round(e.MM_RUN_TIMEOUT_S * 1000),
    cacheMaxBytes: e.MM_CACHE_MAX_BYTES,
    xlnxConfig: e.MM_XLNX_CONFIG ?? simulated?.xlnxConfig ?? 'xlnx-config',
    reboot: e.MM_REBOOT ?? 'systemctl reboot',
    pdudaemonUrl: e.MM_PDUDAEMON_URL?.replace(/\/+$/, ''),
    pacDir: path.resolve(e.MM_PAC_DIR ?? simulated?.pacDir ?? '/boot/firmware/xlnx-config'),
    heartbeatIntervalMs: e.MM_HEARTBEAT_INTERVAL_MS,
    heartbeatTimeoutMs: e.MM_HEARTBEAT_TIMEOUT_MS,
    reconnectMaxDelayMs: e.MM_RECONNECT_MAX_DELAY_MS,
    linkCompression: linkCompressionOf(e.MM_LINK_COMPRESSION),
    telemetryIntervalMs: Math.round(e.MM_TELEMETRY_INTERVAL_S * 1000),
    bootIdFile: e.MM_BOOT_ID_FILE ?? simulated?.bootIdFile ?? '/proc/sys/kernel/random/boot_id',
    hostRoot: path.resolve(e.MM_HOST_ROOT ?? '/'),
    logLevel: e.LOG_LEVEL,
    simulate: opts.simulate,
    simulatedGpioPort: e.MM_SIM_GPIO_PORT,
    simulatedBoardModel: e.MM_SIM_BOARD_MODEL,
    simulatedReboot: {
      downMs: e.MM_SIM_REBOOT_DELAY_MS,
      neverReturn: e.MM_SIM_REBOOT_NEVER_RETURN,
      sameBootId: e.MM_SIM_REBOOT_SAME_BOOT_ID,
      fallback: e.MM_SIM_REBOOT_FALLBACK,
    },
    accelerator: {
      xmutil: e.MM_XMUTIL ?? simulated?.accelerator?.xmutil ?? ['xmutil'],
      dfxMgrClient: e.MM_DFX_MGR_CLIENT ?? simulated?.accelerator?.dfxMgrClient ?? ['dfx-mgr-client'],
      xdputil: e.MM_XDPUTIL ?? simulated?.accelerator?.xdputil ?? ['xdputil'],
      appsDir: path.resolve(e.MM_APPS_DIR ?? simulated?.accelerator?.appsDir ?? '/lib/firmware/xilinx'),
      loadTimeoutMs: Math.round(e.MM_APP_LOAD_TIMEOUT_S * 1000),
    },
    ...(terminal ? { terminal } : {}),
  };
}

/**
 * The terminal settings: the shell runs as MM_TERMINAL_USER, or the agent's own user. Never as
 * root unless MM_TERMINAL_USER says `root`: an agent running as root with no user set gives no
 * terminals (and says why). Another user than the agent's: as root it switches itself, otherwise
 * through `sudo -n -u USER -i`.
 */
function terminalSettings(e: z.infer<typeof agentEnvSchema>): TerminalSettings {
  const enabled = ['on', '1', 'true', 'yes'].includes(e.MM_TERMINAL);
  const ownUid = process.getuid?.() ?? -1;
  let user = e.MM_TERMINAL_USER;
  let via: 'self' | 'sudo' = 'self';
  let refusal: string | undefined;
  if (user !== undefined) {
    if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]*\$?$/.test(user)) throw new Error(`not a user name: ${JSON.stringify(user)}`);
    let uid: number;
    try {
      uid = Number(execFileSync('id', ['-u', '--', user], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim());
    } catch {
      throw new Error(`no such user ${JSON.stringify(user)}`);
    }
    if (uid === ownUid) user = undefined;
    else if (ownUid !== 0) via = 'sudo';
  } else if (ownUid === 0) {
    refusal = 'The agent runs as root and MM_TERMINAL_USER is not set: this board gives no terminals (name a user, or root itself, in MM_TERMINAL_USER).';
  } else if (enabled && !e.MM_TERMINAL_SHELL) {
    refusal = noLoginShellRefusal(ownPasswdEntry(ownUid));
  }
  return {
    enabled,
    user,
    via,
    idleMs: Math.round(e.MM_TERMINAL_IDLE_S * 1000),
    shell: e.MM_TERMINAL_SHELL,
    python: e.MM_PYTHON ?? 'python3',
    ...(refusal ? { refusal } : {}),
  };
}

/** This process's user's passwd line (`getent`, so NSS sources count too); undefined when unknown. */
function ownPasswdEntry(uid: number): string | undefined {
  if (uid < 0) return undefined;
  try {
    return execFileSync('getent', ['passwd', String(uid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why terminals as the agent's own user cannot work, from that user's passwd line: a service
 * account (the package's `mm-agent`) has `nologin` for a shell, and every session would end at
 * once. Said before any session opens (403 `terminal_disabled` with this reason) instead.
 */
export function noLoginShellRefusal(passwdLine: string | undefined): string | undefined {
  const fields = passwdLine?.split(':');
  if (!fields || fields.length < 7) return undefined;
  const [name, , , , , , shell] = fields;
  if (!shell || !/(^|\/)(nologin|false)$/.test(shell)) return undefined;
  return `The agent's own user ${name} has no login shell (${shell}): name a board user in MM_TERMINAL_USER (the agent reaches it with sudo -n -u USER -i, docs/terminal.md), or set MM_TERMINAL_SHELL.`;
}

/** A user's uid and primary gid, by name or number (`id`, so NSS sources count too). */
export function resolveUser(name: string): RunnerUser {
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]*\$?$/.test(name)) throw new Error(`not a user name: ${JSON.stringify(name)}`);
  const id = (flag: '-u' | '-g') => {
    try {
      return Number(execFileSync('id', [flag, '--', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim());
    } catch {
      throw new Error(`no such user ${JSON.stringify(name)}`);
    }
  };
  const user = { name, uid: id('-u'), gid: id('-g') };
  if (!Number.isInteger(user.uid) || !Number.isInteger(user.gid)) throw new Error(`cannot resolve the user ${JSON.stringify(name)}`);
  if (user.uid === 0) throw new Error('must not be root (the point is a user of its own)');
  return user;
}
