import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { MAX_HOLD_MS, MIN_HOLD_MS, startMotorServer } from './motor-server.ts';
import { DEFAULT_MOTOR_PORT } from './script-entry.ts';
import { DEFAULT_GPIO_ROOT } from './sysfs-gpio.ts';

/** The deployed script's dead-man hold: a drive command stops the motors this long after it unless renewed. */
const DEFAULT_DRIVE_TIMEOUT_MS = 1000;

const usage = `Usage: mm-gpio-motor [--port N] [--host H] [--gpio-root DIR] [--simulate] [--drive-timeout-ms N]

  --port N         port to listen on (env MM_GPIO_PORT, default ${DEFAULT_MOTOR_PORT}; 0 = any free port)
  --host H         address to listen on (env MM_GPIO_HOST, default 127.0.0.1)
  --gpio-root DIR  the sysfs GPIO folder (env MM_GPIO_ROOT, default ${DEFAULT_GPIO_ROOT},
                   or ./data/gpio-sim with --simulate)
  --simulate       DIR is a plain folder standing in for sysfs (env MM_GPIO_SIMULATE=1)
  --drive-timeout-ms N
                   a drive command stops by itself after N ms unless renewed (env
                   MM_GPIO_DRIVE_TIMEOUT_MS, default ${DEFAULT_DRIVE_TIMEOUT_MS}; 0 = it holds until the next command)
`;

const Settings = z.object({
  port: z
    .string()
    .regex(/^\d{1,5}$/, 'must be a whole number')
    .transform(Number)
    .refine((n) => n <= 65535, 'must be at most 65535'),
  host: z.string().min(1, 'must not be empty'),
  gpioRoot: z.string().min(1, 'must not be empty'),
  simulated: z.boolean(),
  driveTimeoutMs: z
    .string()
    .regex(/^\d{1,6}$/, 'must be a whole number of milliseconds')
    .transform(Number)
    .refine((n) => n === 0 || (n >= MIN_HOLD_MS && n <= MAX_HOLD_MS), `must be 0 or from ${MIN_HOLD_MS} to ${MAX_HOLD_MS}`),
});

function fail(message: string): never {
  console.error(`mm-gpio-motor: ${message}`);
  process.exit(2);
}

let args;
try {
  args = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'gpio-root': { type: 'string' },
      simulate: { type: 'boolean' },
      'drive-timeout-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  }).values;
} catch (e) {
  fail(`${(e as Error).message}\n${usage}`);
}
if (args.help) {
  process.stdout.write(usage);
  process.exit(0);
}

const env = process.env;
const simulated = args.simulate ?? ['1', 'true', 'yes'].includes((env.MM_GPIO_SIMULATE ?? '').toLowerCase());
const parsed = Settings.safeParse({
  port: args.port ?? env.MM_GPIO_PORT ?? String(DEFAULT_MOTOR_PORT),
  host: args.host ?? env.MM_GPIO_HOST ?? '127.0.0.1',
  gpioRoot: args['gpio-root'] ?? env.MM_GPIO_ROOT ?? (simulated ? './data/gpio-sim' : DEFAULT_GPIO_ROOT),
  simulated,
  driveTimeoutMs: args['drive-timeout-ms'] ?? env.MM_GPIO_DRIVE_TIMEOUT_MS ?? String(DEFAULT_DRIVE_TIMEOUT_MS),
});
if (!parsed.success) {
  const issue = parsed.error.issues[0];
  const names: Record<string, string> = { port: '--port / MM_GPIO_PORT', driveTimeoutMs: '--drive-timeout-ms / MM_GPIO_DRIVE_TIMEOUT_MS' };
  const field = String(issue?.path[0]);
  fail(`${names[field] ?? field} ${issue?.message}`);
}
const settings = parsed.data;

const log = (line: string) => console.log(`${new Date().toISOString()} ${line}`);
let server;
try {
  server = await startMotorServer({
    port: settings.port,
    host: settings.host,
    gpioRoot: path.resolve(settings.gpioRoot),
    simulated: settings.simulated,
    driveTimeoutMs: settings.driveTimeoutMs,
    log,
  });
} catch (e) {
  fail(`cannot start: ${(e as Error).message}`);
}

const running = server;
let stopping = false;
const stop = (signal: string) => {
  if (stopping) process.exit(1); // a second signal: give up waiting
  stopping = true;
  log(`${signal}: stopping the motors and shutting down`);
  running.close().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(`mm-gpio-motor: shutdown failed: ${(err as Error).message}`);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
