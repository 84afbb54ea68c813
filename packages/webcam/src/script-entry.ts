/** The port the webcam script listens on unless told otherwise (next to the motor script's 8765). */
export const DEFAULT_WEBCAM_PORT = 8766;

/** The simulated camera's picture, and the capture size asked of a real camera by default. */
export const DEFAULT_CAMERA_SETTINGS = { width: 640, height: 480, fps: 15 } as const;

/**
 * The device-script catalogue entry of this script (every field but the server-set `id`
 * and `updated_at`). The control plane seeds its catalogue with exactly these values.
 */
export const WEBCAM_SCRIPT = {
  name: 'Webcam (MJPEG)',
  device_type: 'webcam',
  description:
    'Serves the board camera as MJPEG. Routes: GET /stream.mjpg (multipart/x-mixed-replace, one JPEG a part with ' +
    'Content-Length and X-Capture-Time), GET /snapshot.jpg (the newest frame), GET /state ({ width, height, fps, device }). ' +
    'Reads a V4L2 camera (/dev/video0 unless MM_WEBCAM_DEVICE) through ffmpeg or gst-launch-1.0; ' +
    '--simulate (MM_WEBCAM_SIMULATE=1) draws a moving test pattern with a frame counter and the capture time, 640x480 at 15 fps.',
  script_filename: 'mm-webcam.mjs',
  remote_dir: '/opt/model-manager/device-scripts/webcam',
  port: DEFAULT_WEBCAM_PORT,
  version: '1.0.0',
} as const;
