/** The port the script listens on unless told otherwise; clear of the usual dev ports. */
export const DEFAULT_MOTOR_PORT = 8765;

/**
 * The device-script catalogue entry of this script (every field but the server-set `id`
 * and `updated_at`). The control plane seeds its catalogue with exactly these values and
 * the simulated board runs the script at this port.
 */
export const GPIO_MOTOR_SCRIPT = {
  name: 'GPIO motor and steering servo',
  device_type: 'gpio',
  description:
    'Drives two DC motors through H-bridges and a steering servo on sysfs GPIO. ' +
    'Routes: POST /motor/forward, /motor/backward, /motor/left, /motor/right (spin in place), /motor/stop (no payload); ' +
    'POST /servo {"angle": 0-180 degrees}, sent as round(angle*255/180); ' +
    'GET /stream (server-sent "state" events with ids on every change, heartbeats while idle); GET /state. ' +
    'Pins: left motor 516/518/520/522, right motor 517/519/521/523, each [Q1 high-A, Q2 low-A, Q3 high-B, Q4 low-B] of its bridge ' +
    '(forward Q1+Q4, backward Q2+Q3, stop all off); servo 524-531 as an 8-bit value, 524 the least significant bit.',
  script_filename: 'mm-gpio-motor.mjs',
  remote_dir: '/opt/model-manager/device-scripts/gpio-motor',
  port: DEFAULT_MOTOR_PORT,
  version: '1.0.0',
} as const;
