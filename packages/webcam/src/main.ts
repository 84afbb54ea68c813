import { parseArgs } from 'node:util';
import { z } from 'zod';
import { CameraError, findCaptureTool, findVideoDevices, SimulatedCamera, V4l2Camera, type CameraSource } from './camera-source.ts';
import { DEFAULT_CAMERA_SETTINGS, DEFAULT_WEBCAM_PORT } from './script-entry.ts';
import { startWebcamServer } from './webcam-server.ts';

const usage = `Usage: mm-webcam [--port N] [--host H] [--device PATH] [--simulate] [--width W] [--height H] [--fps N]

  --port N       port to listen on (env PORT, as the board's supervisor sets it; default ${DEFAULT_WEBCAM_PORT}; 0 = any free port)
  --host H       address to listen on (env MM_WEBCAM_HOST, default 127.0.0.1)
  --device PATH  the V4L2 camera (env MM_WEBCAM_DEVICE, default the first /dev/video*)
  --simulate     a moving test pattern instead of a camera (env MM_WEBCAM_SIMULATE=1)
  --width W, --height H, --fps N
                 capture size and rate (env MM_WEBCAM_WIDTH, MM_WEBCAM_HEIGHT, MM_WEBCAM_FPS;
                 default ${DEFAULT_CAMERA_SETTINGS.width}x${DEFAULT_CAMERA_SETTINGS.height} at ${DEFAULT_CAMERA_SETTINGS.fps} fps)

A real camera is read through ffmpeg or gst-launch-1.0, whichever is on PATH.
`;

const whole = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,5}$/, 'must be a whole number')
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be from ${min} to ${max}`);

const Settings = z.object({
  port: whole(0, 65535),
  host: z.string().min(1, 'must not be empty'),
  device: z.string().optional(),
  simulated: z.boolean(),
  width: whole(16, 4096),
  height: whole(16, 4096),
  fps: whole(1, 60),
});

function fail(message: string, code = 2): never {
  console.error(`mm-webcam: ${message}`);
  process.exit(code);
}

let args;
try {
  args = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      device: { type: 'string' },
      simulate: { type: 'boolean' },
      width: { type: 'string' },
      height: { type: 'string' },
      fps: { type: 'string' },
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
const parsed = Settings.safeParse({
  port: args.port ?? env.PORT ?? String(DEFAULT_WEBCAM_PORT),
  host: args.host ?? env.MM_WEBCAM_HOST ?? '127.0.0.1',
  device: args.device ?? env.MM_WEBCAM_DEVICE,
  simulated: args.simulate ?? ['1', 'true', 'yes'].includes((env.MM_WEBCAM_SIMULATE ?? '').toLowerCase()),
  width: args.width ?? env.MM_WEBCAM_WIDTH ?? String(DEFAULT_CAMERA_SETTINGS.width),
  height: args.height ?? env.MM_WEBCAM_HEIGHT ?? String(DEFAULT_CAMERA_SETTINGS.height),
  fps: args.fps ?? env.MM_WEBCAM_FPS ?? String(DEFAULT_CAMERA_SETTINGS.fps),
});
if (!parsed.success) {
  const issue = parsed.error.issues[0];
  const names: Record<string, string> = {
    port: '--port / PORT',
    width: '--width / MM_WEBCAM_WIDTH',
    height: '--height / MM_WEBCAM_HEIGHT',
    fps: '--fps / MM_WEBCAM_FPS',
  };
  const field = String(issue?.path[0]);
  fail(`${names[field] ?? field} ${issue?.message}`);
}
const settings = parsed.data;
const cameraSettings = { width: settings.width, height: settings.height, fps: settings.fps };

let camera: CameraSource;
if (settings.simulated) camera = new SimulatedCamera(cameraSettings);
else {
  // The tool first: without one, no camera could be read anyway.
  if (!findCaptureTool()) fail(`no capture tool found: install ffmpeg or gst-launch-1.0 (GStreamer) on the board; looked on PATH=${env.PATH ?? ''}`, 1);
  const device = settings.device ?? findVideoDevices()[0];
  if (!device) fail('no camera found: no /dev/video* device on this board (connect a V4L2 camera, or run with --simulate)', 1);
  try {
    camera = new V4l2Camera(device, cameraSettings);
  } catch (e) {
    fail(e instanceof CameraError ? e.message : `cannot open the camera: ${(e as Error).message}`, 1);
  }
}

const log = (line: string) => console.log(`${new Date().toISOString()} ${line}`);
let server;
try {
  server = await startWebcamServer({
    camera,
    port: settings.port,
    host: settings.host,
    log,
    // The capture tool died: exit non-zero so the board's supervisor restarts the script.
    onCameraError: (err) => fail(err.message, 1),
  });
} catch (e) {
  await camera.stop();
  fail(`cannot start: ${(e as Error).message}`, 1);
}

const running = server;
let stopping = false;
const stop = (signal: string) => {
  if (stopping) process.exit(1);
  stopping = true;
  log(`${signal}: shutting down`);
  running.close().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(`mm-webcam: shutdown failed: ${(err as Error).message}`);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
