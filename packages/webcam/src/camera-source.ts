import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { JpegSplitter } from './jpeg-splitter.ts';
import { TestPattern } from './test-pattern.ts';

/** One captured frame: the JPEG, its number (from 1) and when it was captured (ms since the epoch). */
export interface Frame {
  jpeg: Buffer;
  seq: number;
  capturedAt: number;
}

export interface CameraSettings {
  width: number;
  height: number;
  fps: number;
}

/** Where frames come from: the simulated test pattern or a V4L2 camera through a capture tool. */
export interface CameraSource {
  /** What `/state` reports as `device`: the camera's path, or `simulated`. */
  readonly device: string;
  readonly settings: CameraSettings;
  start(onFrame: (frame: Frame) => void, onError: (err: Error) => void): void;
  stop(): Promise<void>;
}

/** A camera that cannot be used, with a message a person can act on. */
export class CameraError extends Error {
  override name = 'CameraError';
}

/** The simulated camera: the test pattern at the set size and rate, timed by the wall clock. */
export class SimulatedCamera implements CameraSource {
  readonly device = 'simulated';
  private timer: NodeJS.Timeout | undefined;
  private readonly pattern: TestPattern;

  constructor(readonly settings: CameraSettings) {
    this.pattern = new TestPattern(settings.width, settings.height);
  }

  start(onFrame: (frame: Frame) => void): void {
    const interval = 1000 / this.settings.fps;
    const t0 = Date.now();
    let seq = 0;
    // Each frame is due at t0 + seq·interval: a slow encode does not make the rate drift,
    // and frames that could not be made in time are skipped rather than bunched.
    const tick = () => {
      const now = Date.now();
      seq = Math.max(seq + 1, Math.floor((now - t0) / interval) + 1);
      onFrame({ jpeg: this.pattern.render(seq, now), seq, capturedAt: now });
      const due = t0 + seq * interval;
      this.timer = setTimeout(tick, Math.max(0, due - Date.now()));
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** The capture tools the script knows, in the order it tries them. */
export const CAPTURE_TOOLS = ['ffmpeg', 'gst-launch-1.0'] as const;
export type CaptureTool = (typeof CAPTURE_TOOLS)[number];

/** The first of the capture tools on `PATH`, with its full path; undefined when there is none. */
export function findCaptureTool(envPath = process.env.PATH ?? ''): { tool: CaptureTool; path: string } | undefined {
  for (const tool of CAPTURE_TOOLS) {
    for (const dir of envPath.split(path.delimiter)) {
      if (!dir) continue;
      const candidate = path.join(dir, tool);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        return { tool, path: candidate };
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

/** `/dev/video*` capture devices, in number order (`/dev/video0` first). */
export function findVideoDevices(devDir = '/dev'): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(devDir);
  } catch {
    return [];
  }
  return names
    .filter((n) => /^video\d+$/.test(n))
    .sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)))
    .map((n) => path.join(devDir, n));
}

/** The command line that makes the tool write MJPEG (concatenated JPEGs) to stdout. */
export function captureCommand(tool: CaptureTool, device: string, s: CameraSettings): string[] {
  if (tool === 'ffmpeg') {
    return [
      '-hide_banner', '-loglevel', 'error', '-nostdin',
      '-f', 'v4l2', '-framerate', String(s.fps), '-video_size', `${s.width}x${s.height}`, '-i', device,
      // Cameras that deliver MJPEG are copied through; others are encoded.
      '-f', 'mjpeg', '-q:v', '5', '-',
    ];
  }
  return [
    '-q', 'v4l2src', `device=${device}`, '!', 'videoconvert', '!', 'videoscale', '!', 'videorate', '!',
    `video/x-raw,width=${s.width},height=${s.height},framerate=${s.fps}/1`, '!', 'jpegenc', 'quality=80', '!', 'fdsink', 'fd=1',
  ];
}

/**
 * A V4L2 camera read through ffmpeg or gst-launch-1.0 (whichever the board has), whose
 * MJPEG output on stdout is split into frames. The tool and the device are checked when
 * the source is made, so a board without them fails at start with a clear message.
 */
export class V4l2Camera implements CameraSource {
  private child: ChildProcess | undefined;
  private stopping = false;
  readonly tool: { tool: CaptureTool; path: string };

  constructor(
    readonly device: string,
    readonly settings: CameraSettings,
    opts: { envPath?: string } = {},
  ) {
    const tool = findCaptureTool(opts.envPath);
    if (!tool) {
      throw new CameraError(`no capture tool found: install ffmpeg or gst-launch-1.0 (GStreamer) on the board; looked on PATH=${opts.envPath ?? process.env.PATH ?? ''}`);
    }
    this.tool = tool;
    try {
      fs.accessSync(device, fs.constants.R_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new CameraError(
        code === 'ENOENT'
          ? `no camera at ${device}: connect a V4L2 camera (ls /dev/video*) or pick another with --device / MM_WEBCAM_DEVICE`
          : `cannot read the camera ${device} (${code ?? 'error'}): the script's user needs the video group`,
      );
    }
  }

  start(onFrame: (frame: Frame) => void, onError: (err: Error) => void): void {
    let seq = 0;
    const splitter = new JpegSplitter((jpeg) => onFrame({ jpeg, seq: ++seq, capturedAt: Date.now() }));
    const child = spawn(this.tool.path, captureCommand(this.tool.tool, this.device, this.settings), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => splitter.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
    child.on('error', (err) => onError(new CameraError(`${this.tool.tool} could not be started: ${err.message}`)));
    child.on('exit', (code, signal) => {
      if (this.stopping) return;
      onError(new CameraError(`${this.tool.tool} stopped (${code ?? signal}) reading ${this.device}: ${stderr.trim() || 'no message'}`));
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => child.kill('SIGKILL'), 3000);
      child.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }
}
