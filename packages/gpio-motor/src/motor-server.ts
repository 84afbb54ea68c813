import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { DEFAULT_HEARTBEAT_MS, EventStream } from './event-stream.ts';
import { type ChangeCause, MotorController, type MotorState } from './motor-controller.ts';
import { createSimulatedSysfs, DEFAULT_GPIO_ROOT, SysfsGpio } from './sysfs-gpio.ts';
import { type Motion, MOTIONS, SERVO_MAX_ANGLE } from './wiring.ts';

export interface MotorServerOptions {
  /** 0 picks a free port. */
  port: number;
  /** Default 127.0.0.1: on the board only the agent (and local tools) should reach it. */
  host?: string;
  /** Default /sys/class/gpio. */
  gpioRoot?: string;
  /** The root is a plain folder standing in for sysfs (laid out if missing). */
  simulated?: boolean;
  /** How long a `/stream` client may go without output before it gets a heartbeat comment. */
  heartbeatMs?: number;
  /**
   * The dead-man hold: a drive command (forward, backward, left, right) keeps the motors
   * running this long unless it is renewed (the same command again) or replaced; then they
   * stop by themselves (a `timeout` event). A command's `?hold_ms=` sets its own hold.
   * 0 or unset: a drive command without `hold_ms` holds until the next command.
   */
  driveTimeoutMs?: number;
  /** One line per notable thing (start, each command, failures). Default: silent. */
  log?: (line: string) => void;
  /** The timers the dead-man hold runs on (tests pass a fake clock). Default: the global ones. */
  timers?: HoldTimers;
}

/** What the dead-man hold needs of a clock. */
export interface HoldTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const GLOBAL_TIMERS: HoldTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
};

export interface MotorServer {
  port: number;
  url: string;
  /** Stops both motors, ends the event streams and closes the server. */
  close(): Promise<void>;
}

/** The event name of every `/stream` event; its data is `{ cause, event_id?, ...state }`. */
export const STATE_EVENT = 'state';

const MAX_BODY_BYTES = 4096;

/** The `?hold_ms=` a drive command may ask for: long enough to survive a relay round trip, at most a minute. */
export const MIN_HOLD_MS = 50;
export const MAX_HOLD_MS = 60_000;

/** `POST /servo` body: the steering angle in degrees. No coercion: "90" is refused. */
const ServoCommand = z.strictObject({
  angle: z
    .number({ error: `angle must be a number of degrees from 0 to ${SERVO_MAX_ANGLE}` })
    .min(0, `angle must be at least 0`)
    .max(SERVO_MAX_ANGLE, `angle must be at most ${SERVO_MAX_ANGLE}`),
});

class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly errors?: Array<{ field: string; message: string }>,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

const titles: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  500: 'Internal Server Error',
};

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export async function startMotorServer(opts: MotorServerOptions): Promise<MotorServer> {
  const log = opts.log ?? (() => {});
  const gpioRoot = opts.gpioRoot ?? DEFAULT_GPIO_ROOT;
  if (opts.simulated) await createSimulatedSysfs(gpioRoot);
  const gpio = new SysfsGpio({ root: gpioRoot, simulated: opts.simulated ?? false });
  const controller = await MotorController.create(gpio);
  const stream = new EventStream(opts.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);

  // The id each change was published under, so a command's answer can name its event.
  const eventIds = new WeakMap<MotorState, number>();
  controller.onChange((cause: ChangeCause, state) => {
    eventIds.set(state, stream.publish(STATE_EVENT, { cause, ...state }));
  });
  const answer = (state: MotorState) => ({ event_id: eventIds.get(state) ?? stream.lastEventId, ...state });

  // The dead-man: the drive command now holding the motors, and when its hold runs out. Every
  // motion command bumps `generation`, so a hold armed for an older command never fires.
  const driveTimeoutMs = opts.driveTimeoutMs ?? 0;
  const timers = opts.timers ?? GLOBAL_TIMERS;
  let held: { motion: Motion; timer: unknown } | undefined;
  let generation = 0;
  const release = () => {
    if (held) timers.clearTimeout(held.timer);
    held = undefined;
  };
  const hold = (motion: Motion, ms: number) => {
    release();
    const armed = ++generation;
    held = {
      motion,
      timer: timers.setTimeout(() => {
        if (armed !== generation) return;
        held = undefined;
        generation++;
        controller.setMotion('stop', 'timeout').then(
          () => log(`motor stop: the ${motion} command was not renewed within ${ms} ms`),
          (err: unknown) => log(`error: the dead-man stop failed: ${(err as Error).message}`),
        );
      }, ms),
    };
  };

  const routes = new Map<string, Partial<Record<string, Handler>>>();
  for (const motion of MOTIONS) {
    routes.set(`/motor/${motion}`, {
      POST: async (req, res) => {
        req.resume(); // no payload expected; whatever was sent is ignored
        const asked = holdParam(req);
        const holdMs = motion === 'stop' ? 0 : (asked ?? driveTimeoutMs);
        if (held && held.motion === motion && holdMs > 0) {
          // A renewal: the lines are already set; only the hold is extended (no event, no writes).
          hold(motion as Motion, holdMs);
          sendJson(res, 200, { ...answer(controller.state()), hold_ms: holdMs });
          return;
        }
        release();
        const issued = ++generation;
        const state = await controller.setMotion(motion as Motion);
        // Armed only if no later command came meanwhile (a stop must not be undone by it).
        if (holdMs > 0 && issued === generation) hold(motion as Motion, holdMs);
        log(`motor ${motion}${holdMs > 0 ? ` (holds ${holdMs} ms unless renewed)` : ''}`);
        sendJson(res, 200, { ...answer(state), hold_ms: holdMs });
      },
    });
  }
  routes.set('/servo', {
    POST: async (req, res) => {
      const body = await readJsonBody(req);
      const parsed = ServoCommand.safeParse(body);
      if (!parsed.success) {
        const errors = parsed.error.issues.map((i) => ({ field: i.path.join('.') || '(body)', message: i.message }));
        throw new HttpProblem(400, 'validation_failed', errors[0]?.message ?? 'The request is not valid.', errors);
      }
      const state = await controller.setServoAngle(parsed.data.angle);
      log(`servo ${parsed.data.angle}° → ${state.servo.value}`);
      sendJson(res, 200, answer(state));
    },
  });
  routes.set('/state', {
    // stream_clients: how many /stream connections are open (a relay should hold one).
    GET: async (_req, res) =>
      sendJson(res, 200, { event_id: stream.lastEventId, stream_clients: stream.clientCount, ...controller.state() }),
  });
  routes.set('/stream', {
    GET: async (req, res) => stream.open(req, res, STATE_EVENT, { cause: 'connect', ...controller.state() }),
  });

  const server = http.createServer((req, res) => {
    const handle = async () => {
      const pathname = new URL(req.url ?? '/', 'http://script').pathname;
      // The relay passes paths as clients wrote them: accept one trailing slash.
      const route = routes.get(pathname.length > 1 ? pathname.replace(/\/$/, '') : pathname);
      if (!route) throw new HttpProblem(404, 'route_not_found', `No route ${pathname}.`);
      const handler = route[req.method ?? ''];
      if (!handler) {
        const allow = Object.keys(route).join(', ');
        throw new HttpProblem(405, 'method_not_allowed', `${pathname} accepts ${allow}.`, undefined, { allow });
      }
      await handler(req, res);
    };
    handle().catch((err: unknown) => {
      const problem =
        err instanceof HttpProblem
          ? err
          : new HttpProblem(500, 'gpio_failed', `Driving the GPIO lines failed: ${(err as Error).message}`);
      if (problem.status >= 500) log(`error: ${problem.message}`);
      if (res.headersSent) return void res.destroy();
      req.resume();
      sendProblem(res, problem);
    });
  });

  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => resolve(server.address() as AddressInfo));
  });
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${hostForUrl}:${address.port}`;
  log(`listening on ${url} (gpio ${gpioRoot}${opts.simulated ? ', simulated' : ''})`);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      release();
      generation++;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      try {
        await controller.stopMotors();
      } catch (err) {
        log(`error: stopping the motors failed: ${(err as Error).message}`);
      }
      stream.close();
      server.closeIdleConnections();
      const cut = setTimeout(() => server.closeAllConnections(), 1000);
      await stopped;
      clearTimeout(cut);
      log('stopped');
    })());

  return { port: address.port, url, close };
}

/** `?hold_ms=N` on a motion command: its own dead-man hold; undefined when absent. */
function holdParam(req: IncomingMessage): number | undefined {
  const raw = new URL(req.url ?? '/', 'http://script').searchParams.get('hold_ms');
  if (raw === null) return undefined;
  const n = /^\d{1,6}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= MIN_HOLD_MS && n <= MAX_HOLD_MS)) {
    const message = `hold_ms must be a whole number of milliseconds from ${MIN_HOLD_MS} to ${MAX_HOLD_MS}`;
    throw new HttpProblem(400, 'validation_failed', message, [{ field: 'hold_ms', message }]);
  }
  return n;
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (declared > MAX_BODY_BYTES) throw new HttpProblem(413, 'payload_too_large', `The body may hold at most ${MAX_BODY_BYTES} bytes.`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpProblem(413, 'payload_too_large', `The body may hold at most ${MAX_BODY_BYTES} bytes.`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpProblem(400, 'malformed_json', 'The body is not valid JSON (expected {"angle": <degrees>}).');
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Errors use the same RFC 9457 shape as the control plane's, so relayed answers read alike. */
function sendProblem(res: ServerResponse, p: HttpProblem): void {
  const body = {
    type: 'about:blank',
    title: titles[p.status] ?? 'Error',
    status: p.status,
    detail: p.message,
    code: p.code,
    ...(p.errors ? { errors: p.errors } : {}),
  };
  const text = JSON.stringify(body);
  res.writeHead(p.status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(text),
    ...p.headers,
  });
  res.end(text);
}
